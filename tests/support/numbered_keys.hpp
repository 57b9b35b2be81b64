// Test helpers shared by the table and aging suites: a deterministic key per number, and the scale
// knob of the randomized tests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack::testing {

// FLOWTRACK_TEST_SCALE (default 1) multiplies the work of the randomized tests: larger runs by hand.
inline int test_scale() {
  const char* scale = std::getenv("FLOWTRACK_TEST_SCALE");
  return scale != nullptr ? std::max(1, std::atoi(scale)) : 1;
}

// The random operations of a table test: all of them in the release tree, a third in the sanitizer
// trees. Their checks catch a bad access or a race the first time its path runs; the random walk's
// rarer states are the release tree's to reach, at a tenth of the cost a step.
inline std::size_t random_steps(std::size_t release_steps) {
#ifdef FLOWTRACK_SANITIZED
  return release_steps / 3 * static_cast<std::size_t>(test_scale());
#else
  return release_steps * static_cast<std::size_t>(test_scale());
#endif
}

// Key number n, scrambled (an odd multiplier is a bijection) so that consecutive numbers do not make
// suspiciously regular hashes: CRC is linear, and a plain counter spreads over buckets perfectly.
template <class Key>
Key numbered_key(std::uint64_t n) {
  n *= 0x9E3779B97F4A7C15ull;
  Key key;
  if constexpr (std::is_same_v<Key, FlowKeyV4>) {
    key = FlowKeyV4::from_host(0x0a000000u + static_cast<std::uint32_t>(n), 0xc6120001u,
                               static_cast<std::uint16_t>(n >> 32), 80, ipproto::kTcp);
  } else {
    for (int i = 0; i < 8; ++i) key.src_addr[8 + i] = static_cast<std::uint8_t>(n >> (8 * i));
    key.dst_addr[15] = 1;
    key.dst_port = to_network16(443);
    key.protocol = ipproto::kUdp;
  }
  return key;
}

}  // namespace flowtrack::testing
