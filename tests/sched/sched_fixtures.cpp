#include "sched_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "flowtrack/hash/crc16.hpp"
#include "flowtrack/hash/toeplitz.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::testing {

HeaderTrace zipf_headers(const ZipfHeaders& spec) {
  HeaderTrace trace;
  Random rng(spec.seed);
  const ToeplitzHasher toeplitz(kMicrosoftRssKey);
  for (std::uint32_t k = 0; k < spec.flows; ++k) {
    // One draw per statement, last field first: the order GCC took for these draws when they were a
    // call's arguments (unspecified there, and another compiler took another), which the pinned metrics
    // of simulator_test.cpp assume.
    const auto sport = static_cast<std::uint16_t>(rng.next());
    const auto dst = static_cast<std::uint32_t>(rng.next());
    const auto src = static_cast<std::uint32_t>(rng.next());
    const auto key = FlowKeyV4::from_host(src, dst, sport, 443, ipproto::kTcp);
    trace.crc16_of_flow.push_back(crc16_flow(key));
    trace.rss_hash_of_flow.push_back(toeplitz.hash(key));
  }
  std::vector<double> cdf(spec.flows);
  double total = 0;
  for (std::uint32_t k = 0; k < spec.flows; ++k) cdf[k] = total += std::pow(k + 1.0, -spec.exponent);
  for (std::uint32_t i = 0; i < spec.packets; ++i) {
    const auto rank = std::upper_bound(cdf.begin(), cdf.end(), rng.unit() * total) - cdf.begin();
    trace.flow_of_packet.push_back(static_cast<std::uint32_t>(std::min<std::ptrdiff_t>(rank, spec.flows - 1)));
    trace.bytes_of_packet.push_back(spec.bytes);
  }
  return trace;
}

}  // namespace flowtrack::testing
