#include "syn_flood_mix.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::cli {

PacketStore mix_syn_flood(const PacketStore& trace, std::span<const ServiceConfig> services, std::uint64_t count,
                          std::uint64_t seed) {
  std::vector<const ServiceConfig*> tcp;
  for (const ServiceConfig& s : services) {
    if (s.protocol == ipproto::kTcp) tcp.push_back(&s);
  }
  if (tcp.empty() || trace.empty()) throw std::invalid_argument("a SYN flood needs a trace and a TCP service");
  Random rng(seed);
  const std::uint64_t first = trace[0].timestamp_ns;
  const std::uint64_t span = trace.duration_ns();
  std::vector<std::uint64_t> times(count);
  for (std::uint64_t& t : times) t = first + rng.below(span + 1);
  std::ranges::sort(times);
  PacketStore mixed(trace.link_type());
  mixed.reserve(trace.size() + count, trace.arena_bytes() + count * 64);
  std::vector<std::uint8_t> frame;
  std::size_t next = 0;
  for (const std::uint64_t t : times) {
    while (next < trace.size() && trace[next].timestamp_ns <= t) mixed.append(trace[next++]);
    const ServiceConfig& s = *tcp[rng.below(tcp.size())];
    const FlowKeyV4 key{.src_addr = to_network32(0x64400000u | static_cast<std::uint32_t>(rng.below(1u << 22))),
                        .dst_addr = s.vip,
                        .src_port = to_network16(static_cast<std::uint16_t>(1024 + rng.below(64512))),
                        .dst_port = s.port,
                        .protocol = ipproto::kTcp};
    frame = build_frame(FrameSpec::tcp4(key, tcpflag::kSyn));
    mixed.append(frame, t, static_cast<std::uint32_t>(std::max<std::size_t>(frame.size(), 60)));
  }
  while (next < trace.size()) mixed.append(trace[next++]);
  return mixed;
}

}  // namespace flowtrack::cli
