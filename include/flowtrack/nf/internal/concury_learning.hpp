// What Concury's control plane does with its data plane's reports (concury_lb.hpp): learns every
// connection it has not heard of (ConcuryControl::learn), gives each known connection an end, so that
// expire() forgets it then, and counts the connections it learnt and those each backend was given.
// This is the part of the control plane that may run off the packet path, on a thread of its own; pool
// changes, repairs and pins use control() directly, at a point where no report is in flight.
//
// A TCP connection learnt from its SYN is half-open until an answer of it is reported, for at most the
// handshake timeout: a SYN of it meanwhile is a retransmission. A SYN of any other known connection
// (answered, met mid-stream, closing, or half-open too long) opens a new connection on the same
// endpoints: within a synchronized connection a SYN is answered by a challenge ACK and changes nothing
// (RFC 9293, 3.10.7.4), so a client sends one there only once the connection is gone (as a reuse of the
// endpoints after TIME-WAIT does). It is counted as a new connection of the backend the arrays give
// it, and is half-open in turn; the endpoints' entry and Dcode stay.
//
// A connection's end: the long timeout (Lifetimes::known, the configuration's longest) after its last
// report (its learning, its opening anew on its endpoints, an answer, a close), or, once it is closed
// (a FIN of each side, or an RST of either), the closing timeout after the last FIN or RST of it
// reported, whatever is reported after. One FIN closes one direction only: the other side may send for
// as long as it likes (RFC 9293, 3.6), so a half-closed connection lives as an open one. A datagram
// flow (a service's UDP client endpoint) ends the datagram timeout after its last datagram or answer.
// So a connection lasts for as long as its backend answers, and is protected from rewrites all that
// while, however short the configured timeouts (a conntrack table keeps its connections the same
// way); one whose peers vanished without a FIN or RST lives the long timeout after its last answer.
// Every answer is reported, and every datagram, but one the cache below knows only marks its slot (its
// time, `seen`), and the connection's end moves to it when the end comes, or when the connection
// leaves the slot. Each end is queued, in time order, on the queue of its timeout; an entry whose time
// is no longer its connection's end (a later close, a reopening, a moved end) is skipped when it
// leaves, and the long queue is compacted once stale entries are half of it, so the queues hold
// O(known connections), not O(connections ever closed). An end moved to a report older than its
// queue's last entry is queued at that entry's time (so a connection may live up to one more of its
// timeouts after its last report), and a connection is never forgotten before its end.
//
// Most reports are of connections known already (every answer of a connection, every UDP packet of a
// flow), and at scale each costs the OthelloMap's find, a few lines from DRAM. A direct-mapped cache of
// connections known for sure sits in front: a report that hits it is skipped, which is what learning it
// would have done (a known connection keeps its Dcode, and the arrays give it that Dcode). Exact: a slot
// holds one connection's (service, key), written when the connection is learnt or found known, cleared
// when it is forgotten, so a hit is never a connection the control plane does not know. Its top bit
// (kHalfOpen) says the connection may be half-open: set by a SYN, cleared by an answer, so a hit
// without it is never half-open (a SYN of it opens a new connection) and one with it asks the half-open
// set, never the OthelloMap. A SYN or a close always takes effect, hit or not; an answer or a datagram
// that hits only writes its time into the slot (one store to the line the hit read), unless it is a
// datagram and its flow's end is not yet a datagram flow's (a flow met first by its backend's answer):
// that datagram takes effect.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

class ConcuryLearning {
 public:
  // What the data plane met: a TCP SYN without ACK or a UDP datagram, each to a service (an opening, a
  // new connection given to the backend unless it is known), a backend's answer, or a close: a TCP FIN
  // of the client or of the backend, or an RST of either (a backend's close is an answer too).
  enum class Met : std::uint8_t { syn, datagram, answer, client_fin, backend_fin, reset };
  static bool is_close(Met met) { return met >= Met::client_fin; }
  // A connection the data plane met: its key and the Dcode the arrays gave it, the backend that Dcode
  // means, when, and what.
  struct Report {
    compact::ConcuryControl::Report connection;  // vip: the service
    Nanos at;
    std::uint16_t backend;
    Met met;
  };
  static_assert(sizeof(Report) == 32, "two reports a cache line, on the ring to a control thread of its own");

  // How long a connection is kept (see above): `known` after its last report, `closing` after its last
  // close report once it is closed, `datagram` after a datagram flow's last datagram or answer; a SYN is
  // a retransmission for `handshake` after the first.
  struct Lifetimes {
    Nanos known;
    Nanos handshake;
    Nanos closing;
    Nanos datagram;
  };
  ConcuryLearning(compact::ConcuryControl control, Lifetimes lifetimes);

  // Learns the reports in order, as one learn() each would (ConcuryControl::learn_all). Keys are
  // client endpoints (48 bits) and services fewer than kMaxServices, so that (service, key) fits a cache
  // tag with its kHalfOpen bit.
  static constexpr std::uint32_t kMaxServices = 0x7fff;
  void learn_all(std::span<const Report> reports);
  // Remembers a connection the caller made known through control().keep() (a repair, a pin's rehoming),
  // `fresh` when the control plane did not know it before.
  void kept(const Report& report, bool fresh);
  // Forgets every connection whose end is `now` or earlier, handling up to `budget` queued ends (those
  // left are handled by the next calls; a connection reported since its end was set, and not closed,
  // has it moved instead), and ends the half-open state of every connection whose SYN is the handshake
  // timeout old; returns how many it forgot.
  std::size_t expire(Nanos now, std::size_t budget);
  // No known connection ends before this time, if any is known (an earlier queued end may be stale, or
  // moved by a later report).
  std::optional<Nanos> next_end() const;
  // A connection's end for a report at `at` with that timeout: their sum, saturated.
  static Nanos end_of(Nanos at, Nanos timeout) { return at + std::min(timeout, std::numeric_limits<Nanos>::max() - at); }
  // When the oldest SYN of a connection still held half-open came, if any is.
  std::optional<Nanos> oldest_handshake() const;
  // True when a SYN of this known connection at `now` is a retransmission (see above).
  bool half_open(std::uint32_t service, std::uint64_t key, Nanos now) const;

  compact::ConcuryControl& control() { return control_; }
  const compact::ConcuryControl& control() const { return control_; }
  const Lifetimes& lifetimes() const { return lifetimes_; }  // set once: any thread may read them
  std::uint64_t learnt() const { return learnt_count_; }
  std::uint64_t forgotten() const { return forgotten_; }
  // The most connections known at once.
  std::size_t peak_known() const { return peak_known_; }
  std::size_t queued_ends() const;  // stale ones included
  // The new connections a backend of a service was given, ever (a retransmitted SYN or a later datagram
  // of a known flow is none).
  std::uint64_t new_connections(std::uint32_t service, std::uint16_t backend) const;

 private:
  struct End {
    Nanos at;
    std::uint64_t tag;
  };
  using EndQueue = std::deque<End>;  // in time order; all of one queue's ends were set with its timeout
  enum Timeout : std::size_t { kKnown, kClosing, kDatagram, kTimeouts };  // the queues, by timeout
  // A slot of the known connections' cache (see above).
  struct KnownSlot {
    std::uint64_t tag;  // kEmpty, or a known connection's tag (with kHalfOpen when it may be half-open)
    // The time of the slot's connection's last report that its end does not count yet (kNoActivity:
    // none), with kDatagramFlow when the connection is a datagram flow (one met first by its backend's
    // answer is not, until its first datagram).
    Nanos seen;
    bool holds(std::uint64_t t) const { return (tag & ~kHalfOpen) == t; }
    Nanos activity() const { return seen & ~kDatagramFlow; }  // kNoActivity, or that report's time
    bool activity_pending() const { return activity() != kNoActivity; }
    bool datagram_flow() const { return (seen & kDatagramFlow) != 0; }
    void mark(Nanos at) { seen = (seen & kDatagramFlow) | at; }
  };
  // A known connection's end, the queue it is on, and the closes reported of it since it was learnt or
  // opened anew.
  struct Life {
    Nanos end;
    std::uint8_t closes;  // kClientFin | kBackendFin | kReset
    std::uint8_t timeout;  // the Timeout of its end: a kClosing end is never moved by later reports
  };
  static constexpr std::uint8_t kClientFin = 1, kBackendFin = 2, kReset = 4;
  // A report's effect once the control plane has learnt it (`fresh`: it was new) or found it known, `t`
  // being its tag and `slot` its cache slot: its connection's end, counts, half-open state and slot.
  void take_effect(const Report& report, std::uint64_t t, bool fresh, KnownSlot& slot);
  void take_close(const Report& report, std::uint64_t t, bool fresh);  // a close's effect on the life
  // The slot holds t from now on (`bits`: kHalfOpen or 0; no activity and no datagram flow when it held
  // another); a connection it held before takes its last report along, into its end.
  void occupy(KnownSlot& slot, std::uint64_t t, std::uint64_t bits);
  bool half_open_tag(std::uint64_t t, Nanos now) const;  // half_open() by the connection's cache tag
  Nanos lifetime(Timeout timeout) const;  // how long a queue's ends are after the report that set them
  // The connection's end becomes `at` + that timeout (its entry made if it has none), queued on its
  // queue (the report times `at` of one queue never decrease).
  Life& end_at(std::uint64_t t, Nanos at, Timeout timeout);
  // A connection's end moves to its report at `seen` plus its timeout, or to that timeout's queue's last
  // end if that is later (see above); a closed connection's (kClosing) stays.
  void end_after_activity(std::uint64_t t, Life& life, Nanos seen);
  // The one place a life's end is set: `end`, queued on that timeout's queue.
  void set_end(std::uint64_t t, Life& life, Nanos end, Timeout timeout);
  void forget(std::uint64_t t);  // a connection whose end has come
  void compact_known_queue();    // drops the long queue's stale entries
  // The queue whose front is the earliest queued end (the first of equals), or kTimeouts when all are empty.
  Timeout earliest_queue() const;
  void count_opening(const Report& report);  // a new connection given to the report's backend
  static std::uint64_t tag(std::uint32_t service, std::uint64_t key);
  static std::uint32_t service_of_tag(std::uint64_t t) { return static_cast<std::uint32_t>(t >> 48); }
  static std::uint64_t key_of_tag(std::uint64_t t) { return t & ((std::uint64_t{1} << 48) - 1); }
  KnownSlot& known_slot(std::uint64_t tag) { return known_[(tag * 0x9e3779b97f4a7c15ull) >> (64 - kKnownBits)]; }

  compact::ConcuryControl control_;
  Lifetimes lifetimes_;
  // Every known connection's life by tag (exactly the connections the control plane knows), and the
  // queues of ends, one per timeout.
  absl::flat_hash_map<std::uint64_t, Life> lives_;
  std::array<EndQueue, kTimeouts> queues_;
  static constexpr std::size_t kCompactSlack = 4096;  // stale entries the long queue may hold beyond its live ones
  // The half-open connections' SYN times by tag, and the SYNs in arrival order (an entry whose time is
  // no longer its tag's, a later SYN's, or whose tag was answered, is skipped when it leaves).
  absl::flat_hash_map<std::uint64_t, Nanos> half_open_;
  std::deque<std::pair<Nanos, std::uint64_t>> handshakes_;
  std::uint64_t learnt_count_ = 0, forgotten_ = 0;
  std::size_t peak_known_ = 0;
  std::vector<std::vector<std::uint64_t>> new_connections_;  // [service][backend], grown as reports name them
  // The known connections' cache: 2^17 slots (2 MiB), about the connections a campus trace has active
  // at once at 1M known; kEmpty is no tag (service 0x7fff with kHalfOpen).
  static constexpr unsigned kKnownBits = 17;
  static constexpr std::uint64_t kHalfOpen = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static constexpr Nanos kDatagramFlow = Nanos{1} << 63, kNoActivity = kDatagramFlow - 1;  // report times are below
  std::vector<KnownSlot> known_;
};

}  // namespace flowtrack
