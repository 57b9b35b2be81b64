#include "flowtrack/sched/flow_detector.hpp"

#include <cmath>
#include <stdexcept>

namespace flowtrack {
namespace {

std::uint64_t sample_threshold(double sampling) {
  if (!(sampling > 0 && sampling <= 1)) throw std::invalid_argument("the sampling probability must be in (0, 1]");
  if (sampling == 1) return 0;
  return static_cast<std::uint64_t>(std::ldexp(sampling, 64));
}

}  // namespace

AggressiveFlowDetector::AggressiveFlowDetector(const DetectorConfig& config)
    : cache_(config.cache_entries, /*fully_associative=*/true),
      annex_(config.annex_entries),
      rng_(config.seed),
      sample_threshold_(sample_threshold(config.sampling)) {
  if (config.cache_entries == 0) throw std::invalid_argument("the aggressive flow cache needs at least one entry");
}

bool AggressiveFlowDetector::count(std::uint64_t flow) {
  if (cache_.hit(flow) != 0) return true;
  if (annex_.capacity() == 0) {
    cache_.insert(flow, 1);
    return true;
  }
  const std::uint64_t annex_count = annex_.hit(flow);
  if (annex_count == 0) {
    annex_.insert(flow, 1);
    return false;
  }
  if (annex_count <= cache_.least_count(flow)) return false;
  annex_.remove(flow);
  // The demoted victim goes to its own annex set, where it may evict that set's LFU entry.
  if (const auto victim = cache_.insert(flow, annex_count)) annex_.insert(victim->tag, victim->count);
  return true;
}

std::vector<std::uint64_t> AggressiveFlowDetector::aggressive_flows() const {
  std::vector<std::uint64_t> flows;
  for (const auto& entry : cache_.entries()) flows.push_back(entry.tag);
  return flows;
}

}  // namespace flowtrack
