#include "flowtrack/sched/detector_accuracy.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace flowtrack {

DetectorAccuracy measure_detector_accuracy(const HeaderTrace& trace, const DetectorConfig& config) {
  AggressiveFlowDetector detector(config);
  std::vector<std::uint64_t> packets_of_flow(trace.flows(), 0);
  for (std::uint32_t flow : trace.flow_of_packet) {
    detector.observe(flow);
    ++packets_of_flow[flow];
  }
  const std::size_t k = config.cache_entries;
  // The k-th largest count: a flow at least this heavy has fewer than k flows strictly heavier.
  std::vector<std::uint64_t> counts = packets_of_flow;
  const std::size_t kth = std::min(k, counts.size()) - 1;
  std::nth_element(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(kth), counts.end(), std::greater<>());
  const std::uint64_t top_threshold = counts[kth];

  DetectorAccuracy accuracy;
  accuracy.cache_entries = k;
  for (std::uint64_t flow : detector.aggressive_flows()) {
    if (packets_of_flow[flow] >= top_threshold) {
      ++accuracy.top_found;
    } else {
      ++accuracy.false_positives;
    }
  }
  // An unfilled cache slot is a top flow missed, not a false positive.
  accuracy.false_positive_rate = static_cast<double>(accuracy.false_positives) / static_cast<double>(k);
  return accuracy;
}

}  // namespace flowtrack
