// What Concury's control plane does with its data plane's reports (concury_lb.hpp): learns every
// connection it has not heard of (ConcuryControl::learn), remembers when, so that expire() forgets it
// once the longest timeout has passed (in learning order), and counts the connections it learnt and
// those each backend was given. This is the part of the control plane that may run off the packet path,
// on a thread of its own; pool changes, repairs and pins use control() directly, at a point where no
// report is in flight.
//
// A TCP connection learnt from its SYN is half-open until an answer of it is reported, for at most the
// handshake timeout: a SYN of it meanwhile is a retransmission. A SYN of any other known connection
// (answered, met mid-stream, or half-open too long) opens a new connection on the same endpoints: within
// a synchronized connection a SYN is answered by a challenge ACK and changes nothing (RFC 9293,
// 3.10.7.4), so a client sends one there only once the connection is gone (as a reuse of the endpoints
// after TIME-WAIT does). It is counted as a new connection of the backend the arrays give it, and is
// half-open in turn. The known connection's entry and Dcode stay (it is forgotten when the first
// connection on those endpoints would have been).
//
// Most reports are of connections known already (every answer of a connection, every UDP packet of a
// flow), and at scale each costs the OthelloMap's find, a few lines from DRAM. A direct-mapped cache of
// connections known for sure sits in front: a report that hits it is skipped, which is what learning it
// would have done (a known connection keeps its Dcode, and the arrays give it that Dcode). Exact: a slot
// holds one connection's (service, key), written when the connection is learnt or found known, cleared
// when it is forgotten, so a hit is never a connection the control plane does not know. Its top bit
// (kHalfOpen) says the connection may be half-open: set by a SYN, cleared by an answer, so a hit
// without it is never half-open (a SYN of it opens a new connection) and one with it asks the half-open
// set, never the OthelloMap.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/compact/concury_control.hpp"

namespace flowtrack {

class ConcuryLearning {
 public:
  // What the data plane met: a TCP SYN without ACK or a UDP datagram, each to a service (an opening, a
  // new connection given to the backend unless it is known), or a backend's answer.
  enum class Met : std::uint8_t { syn, datagram, answer };
  // A connection the data plane met: its key and the Dcode the arrays gave it, the backend that Dcode
  // means, when, and what.
  struct Report {
    compact::ConcuryControl::Report connection;  // vip: the service
    Nanos at;
    std::uint16_t backend;
    Met met;
  };

  ConcuryLearning(compact::ConcuryControl control, Nanos forget_after, Nanos handshake_timeout);

  // Learns the reports in order, as one learn() each would (ConcuryControl::learn_all). Keys are
  // client endpoints (48 bits) and services fewer than kMaxServices, so that (service, key) fits a cache
  // tag with its kHalfOpen bit.
  static constexpr std::uint32_t kMaxServices = 0x7fff;
  void learn_all(std::span<const Report> reports);
  // Remembers a connection the caller made known through control().keep() (a repair, a pin's rehoming),
  // `fresh` when the control plane did not know it before.
  void kept(const Report& report, bool fresh);
  // Forgets, in learning order, up to `budget` connections learnt `forget_after` or longer before `now`,
  // and ends the half-open state of every connection whose SYN is `handshake_timeout` old.
  std::size_t expire(Nanos now, std::size_t budget);
  // When the connection learnt longest ago was learnt, if any is known.
  std::optional<Nanos> oldest() const;
  // When the oldest SYN of a connection still held half-open came, if any is.
  std::optional<Nanos> oldest_handshake() const;
  // True when a SYN of this known connection at `now` is a retransmission (see above).
  bool half_open(std::uint32_t service, std::uint64_t key, Nanos now) const;

  compact::ConcuryControl& control() { return control_; }
  const compact::ConcuryControl& control() const { return control_; }
  Nanos forget_after() const { return forget_after_; }  // these two set once: any thread may read them
  Nanos handshake_timeout() const { return handshake_timeout_; }
  std::uint64_t learnt() const { return learnt_count_; }
  std::uint64_t forgotten() const { return forgotten_; }
  // The new connections a backend of a service was given, ever (a retransmitted SYN or a later datagram
  // of a known flow is none).
  std::uint64_t new_connections(std::uint32_t service, std::uint16_t backend) const;

 private:
  struct Learnt {
    Nanos at;
    std::uint32_t service;
    std::uint64_t key;
  };
  // A report's effect once the control plane has learnt it (`fresh`: it was new) or found it known,
  // `slot` being its cache slot: what is remembered, counted, held half-open and cached.
  void take_effect(const Report& report, bool fresh, std::uint64_t& slot);
  bool half_open_tag(std::uint64_t t, Nanos now) const;  // half_open() by the connection's cache tag
  void remember(const Report& report);       // a connection the control plane learnt, for expire()
  void count_opening(const Report& report);  // a new connection given to the report's backend
  static std::uint64_t tag(std::uint32_t service, std::uint64_t key);
  std::uint64_t& known_slot(std::uint64_t tag) { return known_[(tag * 0x9e3779b97f4a7c15ull) >> (64 - kKnownBits)]; }

  compact::ConcuryControl control_;
  Nanos forget_after_;
  std::deque<Learnt> learnt_;  // learning happens in time order, so the queue is sorted by time
  Nanos handshake_timeout_;
  // The half-open connections' SYN times by tag, and the SYNs in arrival order (an entry whose time is
  // no longer its tag's, a later SYN's, or whose tag was answered, is skipped when it leaves).
  absl::flat_hash_map<std::uint64_t, Nanos> half_open_;
  std::deque<std::pair<Nanos, std::uint64_t>> handshakes_;
  std::uint64_t learnt_count_ = 0, forgotten_ = 0;
  std::vector<std::vector<std::uint64_t>> new_connections_;  // [service][backend], grown as reports name them
  // The known connections' cache: 2^17 tags (1 MiB), about the connections a campus trace has active
  // at once at 1M known; kEmpty is no tag (service 0x7fff with kHalfOpen).
  static constexpr unsigned kKnownBits = 17;
  static constexpr std::uint64_t kHalfOpen = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::vector<std::uint64_t> known_;
};

}  // namespace flowtrack
