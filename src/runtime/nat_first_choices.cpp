#include "flowtrack/runtime/nat_first_choices.hpp"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "flowtrack/packet/parser.hpp"
#include "flowtrack/packet/rewrite.hpp"
#include "flowtrack/runtime/live_functions.hpp"

namespace flowtrack {
namespace {

// An inside endpoint as the NAT maps it: address (network order), protocol, port or identifier (host order).
struct InsideEndpoint {
  std::uint32_t addr = 0;
  std::uint8_t protocol = 0;
  std::uint16_t port = 0;
  bool outbound = false;  // the packet it was read from goes out (else it is an answer to it)

  std::uint64_t key() const { return (std::uint64_t{addr} << 32) | (std::uint64_t{protocol} << 16) | port; }
};

// The inside endpoint a packet of the trace belongs to, if it is one the NAT maps: a first fragment or
// whole packet with ports (an ICMP query: its identifier) between the inside network and elsewhere.
std::optional<InsideEndpoint> inside_endpoint_of(const ParsedPacket& p, const LiveNat& nat) {
  if (p.ip_version != 4 || p.fragment_offset != 0 || p.icmp_is_error || !p.has_ports) return std::nullopt;
  const auto inside = [&](std::uint32_t addr) { return nat.is_inside(addr); };
  const FlowKeyV4& k = p.key4;
  if (inside(k.src_addr) && !inside(k.dst_addr)) return InsideEndpoint{k.src_addr, k.protocol, to_host16(k.src_port), true};
  if (inside(k.dst_addr) && !inside(k.src_addr)) return InsideEndpoint{k.dst_addr, k.protocol, to_host16(k.dst_port), false};
  return std::nullopt;
}

// A first choice on one worker: (worker, public address, protocol, port).
std::uint64_t choice_key(unsigned worker, std::uint32_t addr, std::uint8_t protocol, std::uint16_t port) {
  return (std::uint64_t{worker} << 56) | (std::uint64_t{protocol} << 48) | (std::uint64_t{to_host32(addr)} << 16) | to_host16(port);
}

}  // namespace

FirstChoices give_each_endpoint_its_first_choice(PacketStore& trace, const NatConfig& config, const PacketOwner& owner,
                                                 unsigned workers) {
  if (config.block_size != 0) throw std::invalid_argument("first choices: the NAT gives ports in blocks, not by endpoint");
  // Each worker's NAT, asked for first choices only: its tables need not hold the load.
  NatConfig small = config;
  small.max_sessions = small.max_mappings = 1024;
  std::vector<std::unique_ptr<LiveNat>> nats;
  for (unsigned w = 0; w < workers; ++w) nats.push_back(std::make_unique<LiveNat>(small, w, workers));

  // Every endpoint the trace has, so that a moved one takes an inside port nobody else uses.
  absl::flat_hash_set<std::uint64_t> used;
  std::vector<std::optional<InsideEndpoint>> endpoint_of(trace.size());
  ParsedPacket p;
  for (std::uint32_t i = 0; i < trace.size(); ++i) {
    if (parse_frame(trace[i].bytes, trace.link_type(), p) != ParseStatus::ok) continue;
    endpoint_of[i] = inside_endpoint_of(p, *nats.front());
    if (endpoint_of[i]) used.insert(endpoint_of[i]->key());
  }

  FirstChoices result;
  absl::flat_hash_set<std::uint64_t> claimed;
  absl::flat_hash_map<std::uint64_t, std::uint16_t> port_of;  // by endpoint key: the inside port it goes out with
  // Claims the first choice of `e` on its worker if it is free; false if another endpoint has it.
  const auto claim = [&](const InsideEndpoint& e) {
    ParsedPacket outbound;
    outbound.ip_version = 4;
    outbound.key4 = {.src_addr = e.addr, .src_port = to_network16(e.port), .protocol = e.protocol};
    const unsigned worker = owner.owner(outbound, 0);
    std::uint32_t addr;
    std::uint16_t port;
    if (!nats[worker]->first_external_endpoint(e.addr, to_network16(e.port), e.protocol, addr, port)) {
      throw std::logic_error("first choices: port by port, every endpoint has one");
    }
    return claimed.insert(choice_key(worker, addr, e.protocol, port)).second;
  };
  for (std::uint32_t i = 0; i < trace.size(); ++i) {
    if (!endpoint_of[i]) continue;
    const InsideEndpoint e = *endpoint_of[i];
    auto [it, first_seen] = port_of.try_emplace(e.key(), e.port);
    if (first_seen) {
      ++result.endpoints;
      InsideEndpoint moved = e;
      while (!claim(moved)) {
        // The next inside port of the same address and protocol that no endpoint of the trace uses.
        do {
          moved.port = static_cast<std::uint16_t>(moved.port == 65535 ? 1 : moved.port + 1);
          if (moved.port == e.port) throw std::runtime_error("first choices: no inside port left with a free first choice");
        } while (used.contains(moved.key()));
      }
      if (moved.port != e.port) {
        used.insert(moved.key());
        ++result.moved;
      }
      it->second = moved.port;
    }
    if (it->second == e.port) continue;
    const std::span<std::uint8_t> frame = trace.mutable_bytes(i);
    parse_frame(frame, trace.link_type(), p);
    const std::uint16_t port = to_network16(it->second);
    if (p.icmp_is_query) rewrite_icmp_identifier(frame, p, port);
    else if (e.outbound) rewrite_src_port(frame, p, port);
    else rewrite_dst_port(frame, p, port);
  }
  return result;
}

}  // namespace flowtrack
