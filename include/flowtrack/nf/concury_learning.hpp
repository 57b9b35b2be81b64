// What Concury's control plane does with its data plane's reports (concury_lb.hpp): learns every
// connection it has not heard of (ConcuryControl::learn), remembers when, so that expire() forgets it
// once the longest timeout has passed (in learning order), and counts the connections it learnt and
// those each backend was given. This is the part of the control plane that may run off the packet path,
// on a thread of its own; pool changes, repairs and pins use control() directly, at a point where no
// report is in flight.
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

  // Learns the reports in order, as one learn() each would (ConcuryControl::learn_all).
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

  compact::ConcuryControl control_;
  Nanos forget_after_;
  std::deque<Learnt> learnt_;  // learning happens in time order, so the queue is sorted by time
  std::uint64_t learnt_count_ = 0, forgotten_ = 0;
  std::vector<std::vector<std::uint64_t>> new_connections_;  // [service][backend], grown as reports name them
};

}  // namespace flowtrack
