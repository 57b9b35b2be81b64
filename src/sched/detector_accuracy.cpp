#include "flowtrack/sched/detector_accuracy.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace flowtrack {
namespace {

// The count a flow needs to be among the k heaviest of `counts` (ties with the k-th included).
std::uint64_t top_threshold(std::vector<std::uint64_t> counts, std::size_t k) {
  const std::size_t kth = std::min(k, counts.size()) - 1;
  std::nth_element(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(kth), counts.end(), std::greater<>());
  return counts[kth];
}

}  // namespace

DetectorAccuracy measure_detector_accuracy(const HeaderTrace& trace, const DetectorConfig& config) {
  AggressiveFlowDetector detector(config);
  std::vector<std::uint64_t> packets_of_flow(trace.flows(), 0);
  for (std::uint32_t flow : trace.flow_of_packet) {
    detector.observe(flow);
    ++packets_of_flow[flow];
  }
  const std::size_t k = config.cache_entries;
  const std::uint64_t threshold = top_threshold(packets_of_flow, k);

  DetectorAccuracy accuracy;
  accuracy.cache_entries = k;
  for (std::uint64_t flow : detector.aggressive_flows()) {
    if (packets_of_flow[flow] >= threshold) {
      ++accuracy.top_found;
    } else {
      ++accuracy.false_positives;
    }
  }
  // An unfilled cache slot is a top flow missed, not a false positive.
  accuracy.false_positive_rate = static_cast<double>(accuracy.false_positives) / static_cast<double>(k);
  return accuracy;
}

WindowedAccuracy measure_windowed_accuracy(const HeaderTrace& trace, const DetectorConfig& config, std::size_t window) {
  if (window == 0 || window > trace.packets()) throw std::invalid_argument("the window must hold 1 .. trace length packets");
  AggressiveFlowDetector detector(config);
  const std::size_t k = config.cache_entries;
  std::vector<std::uint64_t> in_window(trace.flows(), 0);
  std::vector<std::uint32_t> touched;  // flows seen in the current window
  WindowedAccuracy result;
  result.window = window;
  result.min = 1;
  double sum = 0;
  for (std::size_t i = 0; i < trace.packets(); ++i) {
    const std::uint32_t flow = trace.flow_of_packet[i];
    detector.observe(flow);
    if (in_window[flow]++ == 0) touched.push_back(flow);
    if ((i + 1) % window != 0) continue;
    std::vector<std::uint64_t> counts;
    counts.reserve(touched.size());
    for (std::uint32_t f : touched) counts.push_back(in_window[f]);
    const std::uint64_t threshold = top_threshold(std::move(counts), k);
    std::size_t found = 0;
    for (std::uint64_t f : detector.aggressive_flows()) found += in_window[f] >= threshold ? 1 : 0;
    const double accuracy = static_cast<double>(found) / static_cast<double>(k);
    sum += accuracy;
    result.min = std::min(result.min, accuracy);
    ++result.checks;
    for (std::uint32_t f : touched) in_window[f] = 0;
    touched.clear();
  }
  result.mean = sum / static_cast<double>(result.checks);
  return result;
}

}  // namespace flowtrack
