// The two ends of a NAT pair's sync link as state machines over datagrams (nat_sync_message.hpp): no
// socket, no thread, no clock of their own, so that loss, reordering, replays and forgeries are tested
// by handing them datagrams; whoever runs the pair gives them a UDP socket and a thread.
//
// The active queues the records of its state's changes in order; they leave in data messages, each
// with the next sequence number, as soon as a message is full or when its oldest record has waited
// `flush` (batching). The standby applies data messages strictly in sequence (to a NatReplica) and
// acknowledges cumulatively the last one it holds; anything else it drops (a duplicate, or one after a
// gap: go-back-N). The active sends every message unacknowledged after `retransmit` again, at most
// `window` messages in flight. With nothing to send for `heartbeat`, it sends a heartbeat.
//
// Resynchronisation: a standby that starts, or finds its active restarted (a new epoch), has nothing it
// can trust: it sends a hello every `heartbeat` until a data message that begins with resync_begin
// comes. The active answers a hello from a standby incarnation it has not yet sent the whole state to:
// take_resync_request() tells its owner, who drops every record queued or in flight and queues
// resync_begin (begin_resync()), the whole state, then resync_end, then the changes that follow. An
// active whose backlog outgrows its bound (max_backlog records) (a standby gone for long) drops it and asks its
// owner for the same.
//
// Every datagram is refused before it changes anything when it is malformed or forged
// (open_sync_message), and as replayed when its epoch is older than the last one seen from that peer,
// or its counter not above the last one of that epoch. A new epoch is taken only from what can only be
// the peer's: any authenticated datagram with a greater epoch (a restarted peer); the standby then
// asks for everything again.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "flowtrack/util/time.hpp"
#include "flowtrack/nf/nat_replica.hpp"
#include "flowtrack/nf/nat_sync_message.hpp"

namespace flowtrack {

struct SyncTimers {
  Nanos heartbeat = 100 * kNanosPerMilli;   // active: a heartbeat when idle this long; standby: a hello this often while it waits
  Nanos flush = 50 * kNanosPerMilli;        // a record waits at most this long before it goes out
  Nanos retransmit = 200 * kNanosPerMilli;  // an unacknowledged data message goes again after this
  Nanos dead_after = 400 * kNanosPerMilli;  // the standby takes its active for gone after this silence
};

struct SyncCounters {
  std::uint64_t sent = 0, retransmitted = 0, received = 0, records = 0, duplicates = 0, resyncs = 0;
  std::uint64_t acknowledged = 0;  // active: data messages the standby acknowledged
  std::array<std::uint64_t, kSyncRefusalCount> refused{};
  std::uint64_t refused_total() const {
    std::uint64_t n = 0;
    for (const std::uint64_t r : refused) n += r;
    return n;
  }
};

using Datagrams = std::vector<std::vector<std::uint8_t>>;

// What both ends keep of their peer: its epoch and its last counter, for the replay check.
class SyncPeerClock {
 public:
  // Whether an authenticated datagram of `epoch` and `counter` is fresh; a greater epoch starts anew.
  // Sets `new_epoch` when the epoch is greater than any seen before.
  bool fresh(std::uint64_t epoch, std::uint64_t counter, bool& new_epoch);
  std::uint64_t epoch() const { return epoch_; }

 private:
  std::uint64_t epoch_ = 0, counter_ = 0;
};

class NatSyncActive {
 public:
  static constexpr std::size_t kWindow = 1024;  // data messages in flight
  // Records queued before the standby is given up on (about 100 bytes each).
  static constexpr std::size_t kDefaultMaxBacklog = std::size_t{1} << 18;

  // `epoch`: this process's incarnation, greater than any earlier one's (its start time in ns).
  NatSyncActive(const SyncKey& key, std::uint64_t epoch, SyncTimers timers = {}, std::size_t max_backlog = kDefaultMaxBacklog);

  void queue(const SyncRecord& record) {
    queued_.push_back(record);
    if (queued_.size() > max_backlog_) drop_backlog();
  }
  // Drops everything queued or in flight and queues resync_begin for `workers` workers.
  void begin_resync(std::uint8_t workers);
  // Whether a standby asked for the whole state (or the backlog was dropped) since the last call.
  bool take_resync_request();

  // A datagram from the standby, at `now`.
  void receive(std::span<const std::uint8_t> datagram, Nanos now);
  // Appends what goes out at `now`: data messages, retransmissions, a heartbeat.
  void poll(Nanos now, Datagrams& out);

  bool standby_heard_within(Nanos now, Nanos within) const { return heard_ != kNever && now - heard_ <= within; }
  std::size_t in_flight() const { return unacked_.size(); }
  std::size_t queued() const { return queued_.size(); }
  const SyncCounters& counters() const { return counters_; }

 private:
  struct Unacked {
    std::uint64_t seq;
    std::vector<std::uint8_t> payload;
    Nanos sent_at;
  };
  void drop_backlog();
  std::vector<std::uint8_t> seal(SyncType type, std::uint64_t seq, std::span<const std::uint8_t> payload);

  const SyncKey& key_;
  std::uint64_t epoch_;
  SyncTimers timers_;
  std::size_t max_backlog_;
  std::uint64_t counter_ = 0, next_seq_ = 1;
  std::deque<SyncRecord> queued_;
  std::vector<std::uint8_t> pending_;  // the next data message's payload, records taken from queued_
  Nanos pending_since_ = 0;            // when poll() put its first record in
  std::deque<Unacked> unacked_;
  Nanos last_sent_ = kNever, heard_ = kNever;
  SyncPeerClock standby_;
  std::uint64_t resynchronised_epoch_ = 0;  // the standby incarnation last sent (or being sent) the whole state
  bool resync_requested_ = false;
  SyncCounters counters_;
};

class NatSyncStandby {
 public:
  // Applies what it receives to `replica` (a NatReplica; a balancer peer's, lb_peer_link.hpp). `epoch`:
  // this process's incarnation.
  NatSyncStandby(const SyncKey& key, std::uint64_t epoch, SyncReplica& replica, SyncTimers timers = {});

  // A datagram from the active, at `now`; appends the answer (an ack, or a hello) to `out`.
  void receive(std::span<const std::uint8_t> datagram, Nanos now, Datagrams& out);
  // Appends what goes out at `now`: a hello while it waits for the whole state.
  void poll(Nanos now, Datagrams& out);

  // Whether the active was heard within dead_after (a takeover is due when not).
  bool active_alive(Nanos now) const { return heard_ != kNever && now - heard_ <= timers_.dead_after; }
  bool ever_heard() const { return heard_ != kNever; }
  // Whether the replica holds the whole state and the stream since.
  bool synchronised() const { return state_ == State::synchronised; }
  const SyncCounters& counters() const { return counters_; }

 private:
  enum class State : std::uint8_t { waiting, resynchronising, synchronised };
  void ask_for_everything(Nanos now, Datagrams& out);
  std::vector<std::uint8_t> seal(SyncType type, std::uint64_t ack);

  const SyncKey& key_;
  std::uint64_t epoch_;
  SyncReplica& replica_;
  SyncTimers timers_;
  std::uint64_t counter_ = 0;
  std::uint64_t expected_ = 0;  // the next data message's sequence number (0: waiting for resync_begin)
  State state_ = State::waiting;
  Nanos heard_ = kNever, last_hello_ = kNever;
  SyncPeerClock active_;
  SyncCounters counters_;
};

}  // namespace flowtrack
