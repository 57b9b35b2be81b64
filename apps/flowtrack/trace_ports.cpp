// `flowtrack trace ports`: a trace captured on a function's client side, as that function's live ports
// receive it (trace_commands.hpp).
#include <absl/container/flat_hash_map.h>
#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "flowtrack/io/pcap_writer.hpp"
#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/runtime/lb_answers.hpp"
#include "flowtrack/runtime/live_functions.hpp"
#include "flowtrack/runtime/nat_answers.hpp"
#include "flowtrack/runtime/nat_first_choices.hpp"
#include "flowtrack/runtime/packet_owner.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "nf_launch.hpp"
#include "trace_commands.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

// A connection's key, the same for both its directions: the lower endpoint first.
FlowKeyV4 connection_of(const FlowKeyV4& key) {
  const auto endpoint = [](std::uint32_t address, std::uint16_t port) { return (std::uint64_t{to_host32(address)} << 16) | to_host16(port); };
  return endpoint(key.src_addr, key.src_port) <= endpoint(key.dst_addr, key.dst_port) ? key : key.reversed();
}

// The side a packet reaches the function from: the LB's clients send to a VIP, the rest comes from
// the backends' side; the NAT's inside sends from the inside network, the rest comes from outside.
PortRole arrival_side(NfKind nf, const NfConfigs& configs, const ParsedPacket& p) {
  if (nf == NfKind::lb) {
    const bool to_vip = std::ranges::any_of(configs.lb.services, [&](const ServiceConfig& s) { return s.vip == p.key4.dst_addr; });
    return to_vip ? PortRole::clients : PortRole::backends;
  }
  const std::uint32_t mask = configs.nat.inside_prefix_length == 0 ? 0 : ~0u << (32 - configs.nat.inside_prefix_length);
  const bool from_inside = (to_host32(p.key4.src_addr) & mask) == (to_host32(configs.nat.inside_network) & mask);
  return from_inside ? PortRole::inside : PortRole::outside;
}

// Each packet on the worker that owns its connection live, as the ports decide it from the connection's
// packets from the client's (or inside) side (packets that do not parse as IPv4: worker 0). A connection
// whose first packet in the trace is an answer (one cut in two where a shifted window wraps around:
// trace_multiplier.hpp) is owned as the request it answers, its key reversed: an answer as captured
// (from the remote to the inside host, not yet to the NAT's external endpoint) says nothing of its owner.
// Fills `worker_of` (by packet).
PacketPartition partition_by_owner(NfKind nf, const NfConfigs& configs, const PacketStore& trace, const PacketOwner& owner,
                                   unsigned workers, std::vector<std::uint8_t>& worker_of) {
  PacketPartition partition;
  partition.packets.resize(workers);
  absl::flat_hash_map<FlowKeyV4, std::uint8_t, FlowKeyHasher> owners;
  worker_of.assign(trace.size(), 0);
  for (std::uint32_t i = 0; i < trace.size(); ++i) {
    ParsedPacket p;
    if (parse_frame(trace[i].bytes, trace.link_type(), p) == ParseStatus::ok && p.ip_version == 4) {
      ParsedPacket request = p;
      const PortRole side = arrival_side(nf, configs, p);
      if (side == PortRole::backends || side == PortRole::outside) request.key4 = p.key4.reversed();
      worker_of[i] = owners.try_emplace(connection_of(p.key4), static_cast<std::uint8_t>(owner.owner(request, 0))).first->second;
    }
    partition.packets[worker_of[i]].push_back(i);
  }
  return partition;
}

// The rehearsal (replay_rehearsal.hpp) of function `nf` as it runs live, one instance per worker.
RehearsedTrace rehearse_live(NfKind nf, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition) {
  if (nf == NfKind::lb) {
    return rehearse(trace, partition, false, PoolChangeSchedule(),
                    [&](unsigned, unsigned, Nanos start) { return std::make_unique<LiveLb>(configs.lb, start); },
                    LbAnswers(configs.lb, trace.link_type()));
  }
  return rehearse(trace, partition, false, PoolChangeSchedule(),
                  [&](unsigned worker, unsigned workers, Nanos start) { return std::make_unique<LiveNat>(configs.nat, worker, workers, start); },
                  NatAnswers(trace.link_type()));
}

void check_ports_options(const TracePortsOptions& o, NfKind nf, const NfConfigs& configs, const DataplaneConfig& plane) {
  if (nf != NfKind::lb && nf != NfKind::nat) throw UserError("trace ports: --nf must be lb or nat, the functions with two sides");
  if (o.workers == 0 || o.workers > 64 || o.queues == 0 || o.queues > 64) throw UserError("trace ports: --workers and --queues must be in 1..64");
  if (o.split != "rss" && o.split != "owner") throw UserError(fmt::format("trace ports: --split '{}': expected rss or owner", o.split));
  if (o.split == "owner" && o.queues != o.workers && o.queues != 1) {
    throw UserError("trace ports: --split owner puts each worker's connections on its own queue: --queues must be --workers (or 1)");
  }
  if (o.macs.size() != plane.ports.size()) {
    throw UserError(fmt::format("trace ports: --macs gives {} MAC(s) for the configuration's {} port(s)", o.macs.size(), plane.ports.size()));
  }
  if (nf == NfKind::lb && !configs.lb.changes.empty()) {
    throw UserError("trace ports: the configuration has a [[change]] schedule, which live runs count from each worker's first packet");
  }
  if (nf == NfKind::lb && std::ranges::any_of(configs.lb.services, [](const ServiceConfig& s) { return s.tunnel.tunnels(); })) {
    throw UserError("trace ports: a service in a tunnel has its answers sent to the clients directly, not through the ports");
  }
}

}  // namespace

void run_trace_ports(const TracePortsOptions& o) {
  const auto nf = nf_kind_from_name(o.nf);
  if (!nf) throw UserError(fmt::format("trace ports: unknown function '{}'", o.nf));
  const ConfigText text = read_config_file(o.config);
  const NfConfigs configs = load_nf_configs(*nf, text);
  const DataplaneConfig plane = load_dataplane_config(text, o.nf);
  check_ports_options(o, *nf, configs, plane);
  std::vector<MacAddress> macs;
  for (const std::string& text_mac : o.macs) {
    const auto mac = parse_mac(text_mac);
    if (!mac) throw UserError(fmt::format("trace ports: --macs: '{}' is not a MAC address such as 02:70:63:61:70:00", text_mac));
    macs.push_back(*mac);
  }
  PacketStore trace = PacketStore::load_pcap(o.input);
  if (trace.link_type() != LinkType::ethernet) throw UserError("trace ports: the trace must be Ethernet frames, as ports receive them");

  std::vector<std::uint32_t> vips;
  for (const ServiceConfig& s : configs.lb.services) vips.push_back(s.vip);
  const PacketOwner owner = *nf == NfKind::lb ? PacketOwner::lb_client(o.workers, vips) : PacketOwner::nat(o.workers, configs.nat);
  if (*nf == NfKind::nat && configs.nat.block_size == 0) {
    const FirstChoices choices = give_each_endpoint_its_first_choice(trace, configs.nat, owner, o.workers);
    fmt::print("{} of {} inside endpoints moved to another inside port: each has a first choice of external port of its own\n",
               choices.moved, choices.endpoints);
  }
  std::vector<std::uint8_t> worker_of;
  const PacketPartition partition = partition_by_owner(*nf, configs, trace, owner, o.workers, worker_of);
  const RehearsedTrace rehearsed = rehearse_live(*nf, configs, trace, partition);
  std::vector<bool> kept(trace.size(), false);
  for (const auto& queue : rehearsed.partition.packets) {
    for (const std::uint32_t i : queue) kept[i] = true;
  }

  // One file a port and queue, in trace order.
  std::vector<std::vector<PcapWriter>> files(plane.ports.size());
  std::vector<std::vector<std::uint64_t>> written(plane.ports.size(), std::vector<std::uint64_t>(o.queues, 0));
  for (std::size_t port = 0; port < plane.ports.size(); ++port) {
    for (unsigned q = 0; q < o.queues; ++q) {
      files[port].emplace_back(fmt::format("{}-{}-{}.pcap", o.output, port_role_name(plane.ports[port].role), q), LinkType::ethernet,
                               CaptureFormat::pcap);
    }
  }
  const RssSteering rss(o.queues);
  std::vector<std::uint8_t> frame;
  for (std::uint32_t i = 0; i < rehearsed.trace.size(); ++i) {
    if (!kept[i]) continue;
    const PacketView packet = rehearsed.trace[i];
    ParsedPacket p;
    if (parse_frame(packet.bytes, LinkType::ethernet, p) != ParseStatus::ok || p.ip_version != 4) continue;
    const PortRole side = arrival_side(*nf, configs, p);
    const auto port = static_cast<std::size_t>(std::ranges::find(plane.ports, side, &DataplanePortConfig::role) - plane.ports.begin());
    const unsigned queue = o.split == "owner" ? worker_of[i] % o.queues : rss.queue_of_hash(rss.hash_of(p));
    frame.assign(packet.bytes.begin(), packet.bytes.end());
    std::copy(macs[port].begin(), macs[port].end(), frame.begin());  // to the port's own MAC, as a router is sent frames
    files[port][queue].write(frame, packet.timestamp_ns, packet.wire_length);
    ++written[port][queue];
  }
  for (std::size_t port = 0; port < files.size(); ++port) {
    for (unsigned q = 0; q < o.queues; ++q) {
      files[port][q].close();
      fmt::print("{}-{}-{}.pcap: {} packets\n", o.output, port_role_name(plane.ports[port].role), q, written[port][q]);
    }
  }
  fmt::print("{} packets of {}; {} answers left out (no connection through the function explains them)\n",
             trace.size() - rehearsed.unpresentable, trace.size(), rehearsed.unpresentable);
}

}  // namespace flowtrack::cli
