// The records of port blocks given and taken back (port_blocks.hpp), on their way from the worker that
// makes them to the control plane that writes them down (runtime/port_block_journal_writer.hpp): the log a
// carrier-grade NAT keeps so that "who held this public address and port at that time" has an answer
// (RFC 6888 REQ-12, RFC 7422), one record per block rather than per session.
//
// The worker never writes a file: it pushes a record into a single-producer single-consumer ring, a few
// stores, and only when a block changes hands, which is rare (a block serves hundreds of sessions). The
// control plane pops the records from its own thread and writes them.
//
// No record is ever lost. A block is given only when the ring has room for its allocation record plus
// a release record for every block held, itself included: each held block keeps a slot reserved for
// the record of its release, so a release never finds the ring full. When the control plane falls
// behind, new blocks are refused (the NAT counts the packet as log_full) until it catches up; blocks
// already held keep serving.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/util/time.hpp"
#include "flowtrack/sync/spsc_ring.hpp"

namespace flowtrack {

struct PortBlockRecord {
  enum class Event : std::uint8_t { allocated, released };
  Nanos time = 0;                  // the NAT's clock (the journal turns it into wall-clock time)
  std::uint32_t inside_addr = 0;   // network order: the subscriber
  std::uint32_t public_addr = 0;   // network order
  std::uint16_t first_port = 0;    // host order, the block's first and last port
  std::uint16_t last_port = 0;
  Event event = Event::allocated;
};

class PortBlockLog {
 public:
  // Room for `capacity` records in flight (rounded up to a power of two); a NAT needs at least two per
  // block of its slices (Nat44::block_count()).
  explicit PortBlockLog(std::size_t capacity) : ring_(capacity) {}

  // Producer. Pushes the allocation record of a new block if the ring has room for it and for the release
  // record of every held block and of this one; false, with nothing pushed, otherwise.
  bool allocated(const PortBlockRecord& record) {
    if (ring_.capacity() - (pushed_ - ring_.popped()) < owed_ + 2) return false;
    push(record);
    ++owed_;
    return true;
  }
  // Producer. Blocks held since before this log was theirs (restored, taken over from a peer, or held
  // when the log was attached) owe their release records too: reserves `blocks` slots, or none and
  // false when there is no room for them all.
  bool adopt_held_blocks(std::size_t blocks) {
    if (ring_.capacity() - (pushed_ - ring_.popped()) < owed_ + blocks) return false;
    owed_ += blocks;
    return true;
  }
  // Producer. The release of a block whose allocation was recorded (or adopted): always room.
  void released(const PortBlockRecord& record) {
    push(record);
    --owed_;
  }

  // Consumer: takes up to out.size() records, oldest first; returns how many.
  std::size_t take(std::span<PortBlockRecord> out) { return ring_.pop(out); }
  // Consumer: every record waiting, oldest first.
  std::vector<PortBlockRecord> take_all() {
    std::vector<PortBlockRecord> records(ring_.capacity());
    records.resize(take(records));
    return records;
  }

  std::size_t capacity() const { return ring_.capacity(); }

 private:
  void push(const PortBlockRecord& record) {
    pushed_ += ring_.push(std::span(&record, 1));
  }

  SpscRingOf<PortBlockRecord> ring_;
  // The producer's own: records pushed so far, and release records owed by the blocks held.
  std::size_t pushed_ = 0;
  std::size_t owed_ = 0;
};

}  // namespace flowtrack
