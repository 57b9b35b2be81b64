// The uniform and Zipf generators: a fixed set of flows, packets drawn by popularity.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack {
namespace {

// A 32-bit maximal-length Galois LFSR: it visits every non-zero value once per period, so the source
// addresses of the first 2^32 - 1 flows are distinct and have no locality.
class Lfsr32 {
 public:
  explicit Lfsr32(std::uint32_t seed) : state_(seed == 0 ? 1 : seed) {}
  std::uint32_t next() {
    const std::uint32_t lsb = state_ & 1u;
    state_ >>= 1;
    if (lsb) state_ ^= 0xA3000000u;  // taps 32, 30, 26, 25
    return state_;
  }

 private:
  std::uint32_t state_;
};

std::vector<FlowKeyV4> make_flows(const UniformProfile& profile) {
  if (profile.flows == 0) throw std::invalid_argument("at least one flow is needed");
  if (profile.packets < profile.flows) throw std::invalid_argument("need at least as many packets as flows");
  if (profile.packets_per_second <= 0) throw std::invalid_argument("packet rate must be positive");
  if (profile.frame_bytes < 60) throw std::invalid_argument("frames are at least 60 bytes");
  Lfsr32 lfsr(static_cast<std::uint32_t>(profile.seed * 0x9e3779b9u + 1));
  Random rng(profile.seed);
  std::vector<FlowKeyV4> flows(profile.flows);
  for (auto& key : flows) {
    // One draw per statement: draws passed as a call's arguments are taken in an order each compiler
    // picks. Last field first, the order GCC took when these traces were first generated.
    const auto dport = static_cast<std::uint16_t>(rng.next());
    const auto sport = static_cast<std::uint16_t>(rng.next());
    const auto dst = static_cast<std::uint32_t>(rng.next());
    key = FlowKeyV4::from_host(lfsr.next(), dst, sport, dport, ipproto::kUdp);
  }
  return flows;
}

// Emits every flow once, then `packets - flows` more, each choosing its flow with `pick`.
template <class Pick>
PacketStore emit(const UniformProfile& profile, const std::vector<FlowKeyV4>& flows, Pick&& pick) {
  PacketStore store(LinkType::ethernet);
  store.reserve(profile.packets, profile.packets * profile.frame_bytes);
  const std::uint16_t payload = static_cast<std::uint16_t>(profile.frame_bytes - 14 - 20 - 8);
  const double gap_ns = 1e9 / profile.packets_per_second;
  std::vector<std::uint8_t> frame(profile.frame_bytes);
  for (std::uint64_t i = 0; i < profile.packets; ++i) {
    const std::size_t flow = i < flows.size() ? i : pick();
    const std::size_t size = build_frame(FrameSpec::udp4(flows[flow], payload), frame);
    store.append({frame.data(), size}, static_cast<std::uint64_t>(static_cast<double>(i) * gap_ns), size);
  }
  return store;
}

}  // namespace

PacketStore generate_uniform(const UniformProfile& profile) {
  const auto flows = make_flows(profile);
  Random rng(profile.seed ^ 0x5bd1e995u);
  return emit(profile, flows, [&] { return rng.below(flows.size()); });
}

PacketStore generate_zipf(const ZipfProfile& profile) {
  if (profile.exponent <= 0) throw std::invalid_argument("the Zipf exponent must be positive");
  const auto flows = make_flows(profile.base);
  // Inverse-CDF sampling over the ranks: cdf[k] = sum_{j<=k} 1/(j+1)^s, normalised.
  std::vector<double> cdf(flows.size());
  double total = 0;
  for (std::size_t k = 0; k < flows.size(); ++k) {
    total += 1.0 / std::pow(static_cast<double>(k + 1), profile.exponent);
    cdf[k] = total;
  }
  Random rng(profile.base.seed ^ 0x27d4eb2fu);
  return emit(profile.base, flows, [&] {
    const double target = rng.unit() * total;
    return static_cast<std::size_t>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin()) %
           flows.size();
  });
}

}  // namespace flowtrack
