#include "flowtrack/runtime/replay_run.hpp"

#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

PacketStore merge_in_time_order(const std::vector<WorkerReport>& reports, LinkType link) {
  std::vector<std::pair<std::uint64_t, std::pair<std::size_t, std::size_t>>> order;  // (time, (worker, index))
  std::size_t bytes = 0;
  for (std::size_t w = 0; w < reports.size(); ++w) {
    for (std::size_t i = 0; i < reports[w].out.size(); ++i) order.push_back({reports[w].out[i].timestamp_ns, {w, i}});
    bytes += reports[w].out.arena_bytes();
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  PacketStore merged(link);
  merged.reserve(order.size(), bytes);
  for (const auto& [time, where] : order) merged.append(reports[where.first].out[where.second]);
  return merged;
}

double aggregate_mpps(const std::vector<WorkerReport>& reports) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerReport& r : reports) {
    packets += r.counters.packets;
    cycles = std::max(cycles, r.counters.busy_cycles);
  }
  return cycles > 0 ? static_cast<double>(packets) * tsc_hz() / static_cast<double>(cycles) / 1e6 : 0;
}

double cycles_per_packet(const std::vector<WorkerReport>& reports) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerReport& r : reports) {
    packets += r.counters.packets;
    cycles += r.counters.busy_cycles;
  }
  return packets > 0 ? static_cast<double>(cycles) / static_cast<double>(packets) : 0;
}

double stage_cycles_per_packet(const std::vector<WorkerReport>& reports, NfStage stage) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerReport& r : reports) {
    packets += r.counters.packets;
    cycles += r.counters.stage_cycles[static_cast<std::size_t>(stage)];
  }
  return packets > 0 ? static_cast<double>(cycles) / static_cast<double>(packets) : 0;
}

Nanos first_time(const PacketStore& trace, const PacketPartition& partition) {
  Nanos start = kNever;
  for (const auto& queue : partition.packets) {
    if (!queue.empty()) start = std::min(start, trace[queue.front()].timestamp_ns);
  }
  return start == kNever ? 0 : start;
}

}  // namespace flowtrack
