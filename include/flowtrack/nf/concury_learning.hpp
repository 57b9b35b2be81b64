// What Concury's control plane does with its data plane's reports (concury_lb.hpp): learns every
// connection it has not heard of (ConcuryControl::learn), remembers when, so that expire() forgets it
// once the longest timeout has passed (in learning order), and counts the connections it learnt and
// those each backend was given. This is the part of the control plane that may run off the packet path,
// on a thread of its own; pool changes, repairs and pins use control() directly, at a point where no
// report is in flight.
//
// Most reports are of connections known already (every answer of a connection, every UDP packet of a
// flow), and at scale each costs the OthelloMap's find, a few lines from DRAM. A direct-mapped cache of
// connections known for sure sits in front: a report that hits it is skipped, which is what learning it
// would have done (a known connection keeps its Dcode, and the arrays give it that Dcode). Exact: a slot
// holds one connection's (service, key), written when the connection is learnt or found known, cleared
// when it is forgotten, so a hit is never a connection the control plane does not know.
#pragma once

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
  // A connection the data plane met: its key and the Dcode the arrays gave it, the backend that Dcode
  // means, when, and whether it was an opening (a new connection given to that backend) or a backend's
  // answer of a connection met mid-stream.
  struct Report {
    compact::ConcuryControl::Report connection;  // vip: the service
    Nanos at;
    std::uint16_t backend;
    bool opening;
  };

  ConcuryLearning(compact::ConcuryControl control, Nanos forget_after);

  // Learns the reports in order, as one learn() each would (ConcuryControl::learn_all). Keys are
  // client endpoints (48 bits) and services fewer than 0xffff, so that (service, key) fits a cache tag.
  void learn_all(std::span<const Report> reports);
  // Remembers a connection the caller made known through control().keep() (a repair, a pin's rehoming).
  void kept(const Report& report);
  // Forgets, in learning order, up to `budget` connections learnt `forget_after` or longer before `now`.
  std::size_t expire(Nanos now, std::size_t budget);
  // When the connection learnt longest ago was learnt, if any is known.
  std::optional<Nanos> oldest() const;

  compact::ConcuryControl& control() { return control_; }
  const compact::ConcuryControl& control() const { return control_; }
  Nanos forget_after() const { return forget_after_; }  // set once: any thread may read it
  std::uint64_t learnt() const { return learnt_count_; }
  std::uint64_t forgotten() const { return forgotten_; }
  // The openings a backend of a service was given, ever.
  std::uint64_t new_connections(std::uint32_t service, std::uint16_t backend) const;

 private:
  struct Learnt {
    Nanos at;
    std::uint32_t service;
    std::uint64_t key;
  };
  void remember(const Report& report);
  static std::uint64_t tag(std::uint32_t service, std::uint64_t key);
  std::uint64_t& known_slot(std::uint64_t tag) { return known_[(tag * 0x9e3779b97f4a7c15ull) >> (64 - kKnownBits)]; }

  compact::ConcuryControl control_;
  Nanos forget_after_;
  std::deque<Learnt> learnt_;  // learning happens in time order, so the queue is sorted by time
  std::uint64_t learnt_count_ = 0, forgotten_ = 0;
  std::vector<std::vector<std::uint64_t>> new_connections_;  // [service][backend], grown as reports name them
  // The known connections' cache: 2^17 tags (1 MiB), about the connections a campus trace has active
  // at once at 1M known; kEmpty is no tag (service 0xffff).
  static constexpr unsigned kKnownBits = 17;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::vector<std::uint64_t> known_;
};

}  // namespace flowtrack
