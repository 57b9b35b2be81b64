#include "flowtrack/runtime/worker_counters.hpp"

#include <numeric>

namespace flowtrack {

std::string_view runtime_drop_name(RuntimeDrop drop) {
  switch (drop) {
    case RuntimeDrop::not_ipv4: return "not_ipv4";
    case RuntimeDrop::table_full: return "table_full";
    case RuntimeDrop::count_: break;
  }
  return "unknown";
}

std::uint64_t WorkerCounters::drops() const {
  return std::accumulate(parse_drops.begin(), parse_drops.end(), std::uint64_t{0}) +
         std::accumulate(runtime_drops.begin(), runtime_drops.end(), std::uint64_t{0});
}

WorkerCounters& WorkerCounters::operator+=(const WorkerCounters& other) {
  packets += other.packets;
  tracked += other.tracked;
  bytes += other.bytes;
  bursts += other.bursts;
  new_flows += other.new_flows;
  expired_flows += other.expired_flows;
  for (std::size_t i = 0; i < parse_drops.size(); ++i) parse_drops[i] += other.parse_drops[i];
  for (std::size_t i = 0; i < runtime_drops.size(); ++i) runtime_drops[i] += other.runtime_drops[i];
  for (std::size_t i = 0; i < stage_cycles.size(); ++i) stage_cycles[i] += other.stage_cycles[i];
  busy_cycles += other.busy_cycles;
  idle_polls += other.idle_polls;
  return *this;
}

}  // namespace flowtrack
