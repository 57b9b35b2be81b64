#include "flowtrack/runtime/worker_counters.hpp"

#include <numeric>

#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

std::uint64_t WorkerCounters::drops() const {
  return std::accumulate(parse_drops.begin(), parse_drops.end(), std::uint64_t{0}) +
         std::accumulate(function.drops.begin(), function.drops.end(), std::uint64_t{0}) + ring_full;
}

double WorkerCounters::mpps() const {
  return busy_cycles > 0 ? static_cast<double>(packets) * tsc_hz() / static_cast<double>(busy_cycles) / 1e6 : 0;
}

WorkerCounters& WorkerCounters::operator+=(const WorkerCounters& other) {
  packets += other.packets;
  bursts += other.bursts;
  for (std::size_t i = 0; i < parse_drops.size(); ++i) parse_drops[i] += other.parse_drops[i];
  for (std::size_t i = 0; i < stage_cycles.size(); ++i) stage_cycles[i] += other.stage_cycles[i];
  busy_cycles += other.busy_cycles;
  idle_polls += other.idle_polls;
  function += other.function;
  ring_full += other.ring_full;
  migrations_in += other.migrations_in;
  out_of_order += other.out_of_order;
  return *this;
}

}  // namespace flowtrack
