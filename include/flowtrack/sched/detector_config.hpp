// The aggressive flow detector's knobs (flow_detector.hpp): the paper's 16-entry cache and 512-entry
// annex by default, every packet observed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flowtrack {

struct DetectorConfig {
  std::size_t cache_entries = 16;
  std::size_t annex_entries = 512;  // 0, up to 8, or a multiple of 8 (sets of 8 ways)
  double sampling = 1.0;            // in (0, 1]
  std::uint64_t seed = 1;
};

}  // namespace flowtrack
