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
    : cache_(config.cache_entries),
      annex_(config.annex_entries),
      rng_(config.seed),
      sample_threshold_(sample_threshold(config.sampling)) {
  if (config.cache_entries == 0) throw std::invalid_argument("the aggressive flow cache needs at least one entry");
}

void AggressiveFlowDetector::count(std::uint64_t flow) {
  if (cache_.hit(flow) != 0) return;
  if (annex_.capacity() == 0) {
    cache_.insert(flow, 1);
    return;
  }
  const std::uint64_t annex_count = annex_.hit(flow);
  if (annex_count == 0) {
    annex_.insert(flow, 1);
    return;
  }
  if (annex_count <= cache_.least_count()) return;
  annex_.remove(flow);
  // The annex has just freed a slot, so the demoted victim always fits and evicts nothing.
  if (const auto victim = cache_.insert(flow, annex_count)) annex_.insert(victim->tag, victim->count);
}

std::vector<std::uint64_t> AggressiveFlowDetector::aggressive_flows() const {
  std::vector<std::uint64_t> flows;
  for (const auto& entry : cache_.entries()) flows.push_back(entry.tag);
  return flows;
}

}  // namespace flowtrack
