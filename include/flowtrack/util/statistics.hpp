// Summaries of repeated measurements, as the benchmarks report them: the median of a run's
// repetitions, and its quantiles.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace flowtrack {

// The p-quantile (0..1) of samples, by nearest rank; 0 for no samples.
inline double quantile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1) + 0.5);
  return samples[std::min(rank, samples.size() - 1)];
}

inline double median(std::vector<double> samples) { return quantile(std::move(samples), 0.5); }

}  // namespace flowtrack
