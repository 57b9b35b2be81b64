// Small synthetic inputs for the scheduling tests, built directly (no frames): flows with real CRC-16 and
// Toeplitz hashes, and packet sequences drawn from a Zipf law.
#pragma once

#include <cstdint>

#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/header_trace.hpp"

namespace flowtrack::testing {

struct ZipfHeaders {
  std::uint32_t flows = 2'000;
  std::uint32_t packets = 50'000;
  double exponent = 1.0;
  std::uint16_t bytes = 700;
  std::uint64_t seed = 1;
};

// Flow k (0-based) is the (k+1)-th most popular; its 5-tuple is a pure function of (seed, k).
HeaderTrace zipf_headers(const ZipfHeaders& spec);

// Queues `packets` packets on `core`, as if they had arrived and none was served yet.
inline void fill(CoreLoads& loads, unsigned core, unsigned packets) {
  for (unsigned i = 0; i < packets; ++i) loads.arrive(core);
}

}  // namespace flowtrack::testing
