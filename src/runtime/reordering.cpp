#include "flowtrack/runtime/reordering.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <tuple>

namespace flowtrack {

std::vector<std::uint64_t> count_out_of_order(std::span<const std::vector<Delivery>> by_worker,
                                              std::span<const PacketTag> tags) {
  struct Event {
    std::int64_t at_ns;
    std::uint32_t slot;
    std::uint32_t worker;
  };
  std::vector<Event> events;
  for (std::uint32_t w = 0; w < by_worker.size(); ++w) {
    for (const Delivery& d : by_worker[w]) {
      if (tags[d.slot].ip) events.push_back({d.at_ns, d.slot, w});
    }
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return std::tie(a.at_ns, a.slot) < std::tie(b.at_ns, b.slot); });
  std::vector<std::uint64_t> out_of_order(by_worker.size(), 0);
  absl::flat_hash_map<std::uint64_t, std::uint32_t> latest;  // flow -> highest slot delivered so far
  for (const Event& e : events) {
    const auto [it, first] = latest.try_emplace(tags[e.slot].flow, e.slot);
    if (first) continue;
    if (e.slot < it->second) {
      ++out_of_order[e.worker];
    } else {
      it->second = e.slot;
    }
  }
  return out_of_order;
}

}  // namespace flowtrack
