// Queue-length feedback: the one thing a flow scheduler learns about the cores it feeds.
//
// The driver (the simulator, or a live dispatcher reading its worker rings) writes a core's load each
// time a packet enters or leaves it; schedulers only read. A core's load is the number of packets it
// holds: those waiting in its input queue plus the one it is processing. A core is idle when its load is
// zero; `idle_since` is then the moment it became so, which is what the surplus marking of core
// allocation measures (a core idle for the idle threshold is surplus).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/sched/picos.hpp"

namespace flowtrack {

class CoreLoads {
 public:
  explicit CoreLoads(unsigned cores) : load_(cores, 0), idle_since_(cores, 0) {}

  unsigned cores() const { return static_cast<unsigned>(load_.size()); }
  unsigned load(unsigned core) const { return load_[core]; }
  bool idle(unsigned core) const { return load_[core] == 0; }
  // Meaningful only while the core is idle.
  Picos idle_since(unsigned core) const { return idle_since_[core]; }

  void arrive(unsigned core) { ++load_[core]; }
  void depart(unsigned core, Picos now) {
    if (--load_[core] == 0) idle_since_[core] = now;
  }

  // The core with the smallest load among `among` (ties: the first listed), or among all cores.
  unsigned least_loaded(std::span<const std::uint16_t> among) const;
  unsigned least_loaded() const;

 private:
  std::vector<std::uint32_t> load_;
  std::vector<Picos> idle_since_;
};

}  // namespace flowtrack
