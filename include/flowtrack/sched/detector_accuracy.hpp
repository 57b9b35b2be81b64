// How well the aggressive flow detector finds the heaviest flows of a trace (the paper's Fig. 13):
// replay the trace's flow sequence through a detector, then compare its cache with the true top flows.
//
// Ground truth: the k heaviest flows by packet count over the whole trace, k = the cache size. A flow
// tied with the k-th counts as top too (fewer than k flows are strictly heavier), so ties at the boundary
// are never charged as errors. A false positive is a cached flow that is not top; the false positive
// rate is false positives / k.
//
// Over windows (the paper's Fig. 13b, "accuracy checked at fixed intervals"): the detector runs through
// the whole trace and is checked at the end of every window of `window` packets against the heaviest
// flows of that window (the active ones, ties with the k-th included). Accuracy at a check = cached
// flows that are top in the window / k.
#pragma once

#include <cstddef>

#include "flowtrack/sched/flow_detector.hpp"
#include "flowtrack/sched/header_trace.hpp"

namespace flowtrack {

struct DetectorAccuracy {
  std::size_t cache_entries = 0;
  std::size_t top_found = 0;
  std::size_t false_positives = 0;
  double false_positive_rate = 0;
};

DetectorAccuracy measure_detector_accuracy(const HeaderTrace& trace, const DetectorConfig& config);

struct WindowedAccuracy {
  std::size_t window = 0;  // packets between checks
  std::size_t checks = 0;  // whole windows in the trace
  double mean = 0;         // accuracy averaged over the checks, in [0, 1]
  double min = 0;
};

// Throws std::invalid_argument for a zero window or one longer than the trace.
WindowedAccuracy measure_windowed_accuracy(const HeaderTrace& trace, const DetectorConfig& config, std::size_t window);

}  // namespace flowtrack
