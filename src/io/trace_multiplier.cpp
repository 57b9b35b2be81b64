#include "flowtrack/io/trace_multiplier.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "flowtrack/packet/parser.hpp"
#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {
namespace {

struct Placement {
  std::uint64_t timestamp_ns;
  std::uint32_t copy;
  std::uint32_t index;  // in the original trace
};

}  // namespace

PacketStore multiply_trace(const PacketStore& trace, const MultiplyOptions& options) {
  if (options.windows == 0) throw std::invalid_argument("at least one window is needed");
  if (options.client_prefix_length == 0 || options.client_prefix_length > 31) {
    throw std::invalid_argument("client prefix length must be in [1, 31]");
  }
  const unsigned shift = 32 - options.client_prefix_length;
  const std::uint64_t room = options.client_prefix_length >= 8 ? 1ull << (options.client_prefix_length - 8) : 1;
  if (options.windows > room) {
    throw std::invalid_argument("too many windows for the client network (copies would leave its /8)");
  }
  const std::uint32_t prefix_mask = ~((1u << shift) - 1);
  const std::uint32_t client_base = options.client_network & prefix_mask;

  const std::uint64_t origin = trace.empty() ? 0 : trace.records().front().timestamp_ns;
  const std::uint64_t duration = trace.duration_ns() + 1;
  std::vector<Placement> order;
  order.reserve(trace.size() * options.windows);
  for (std::uint32_t copy = 0; copy < options.windows; ++copy) {
    const std::uint64_t offset = duration * copy / options.windows;
    for (std::uint32_t i = 0; i < trace.size(); ++i) {
      const std::uint64_t t = trace.records()[i].timestamp_ns - origin;
      order.push_back({t >= offset ? t - offset : t + duration - offset, copy, i});
    }
  }
  std::sort(order.begin(), order.end(), [](const Placement& a, const Placement& b) {
    if (a.timestamp_ns != b.timestamp_ns) return a.timestamp_ns < b.timestamp_ns;
    return a.copy != b.copy ? a.copy < b.copy : a.index < b.index;
  });

  PacketStore out(trace.link_type());
  out.reserve(order.size(), trace.arena_bytes() * options.windows);
  for (const Placement& place : order) {
    const PacketView original = trace[place.index];
    out.append(original.bytes, place.timestamp_ns, original.wire_length);
    if (place.copy == 0) continue;
    auto bytes = out.mutable_bytes(out.size() - 1);
    ParsedPacket packet;
    if (parse_frame(bytes, out.link_type(), packet) != ParseStatus::ok || packet.ip_version != 4) continue;
    // Move the copy's clients to their own slice of the client network (host order arithmetic).
    const std::uint32_t delta = place.copy << shift;
    const std::uint32_t src = to_host32(packet.key4.src_addr);
    const std::uint32_t dst = to_host32(packet.key4.dst_addr);
    if ((src & prefix_mask) == client_base) rewrite_ipv4_src(bytes, packet, to_network32(src + delta));
    if ((dst & prefix_mask) == client_base) rewrite_ipv4_dst(bytes, packet, to_network32(dst + delta));
  }
  return out;
}

}  // namespace flowtrack
