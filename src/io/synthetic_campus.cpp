// The campus-like generator: connections arrive as a Poisson process and each is a complete exchange in
// both directions. Packets of all connections are scheduled first (compact events), sorted by time, and
// only then built into frames, so the store is written once, in order.
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack {
namespace {

constexpr std::uint16_t kMss = 1448;

struct Connection {
  FlowKeyV4 key;  // client -> server direction
  std::uint32_t client_seq;
  std::uint32_t server_seq;
};

// One packet of one connection, before it becomes a frame.
struct Event {
  std::uint64_t timestamp_ns;
  std::uint32_t connection;
  std::uint16_t payload;
  std::uint8_t tcp_flags;
  bool from_server;
};

void validate(const CampusProfile& p) {
  if (p.flows == 0) throw std::invalid_argument("at least one flow is needed");
  if (p.new_flows_per_second <= 0) throw std::invalid_argument("the flow arrival rate must be positive");
  if (p.mean_data_packets < 1 || p.pareto_shape <= 1) {
    throw std::invalid_argument("need mean data packets >= 1 and a Pareto shape > 1");
  }
  if (p.tcp_share < 0 || p.udp_share < 0 || p.tcp_share + p.udp_share > 1) {
    throw std::invalid_argument("protocol shares must be in [0, 1] and sum to at most 1");
  }
  if (p.client_prefix_length < 8 || p.client_prefix_length > 30) {
    throw std::invalid_argument("the client prefix length must be in [8, 30]");
  }
  if (p.servers == 0 || p.servers > 250) throw std::invalid_argument("servers must be in [1, 250]");
  const std::uint64_t client_hosts = (1ull << (32 - p.client_prefix_length)) - 2;
  if (p.flows > client_hosts * 20000) throw std::invalid_argument("more flows than client address/port pairs");
  if (p.snaplen != 0 && p.snaplen < 64) throw std::invalid_argument("snaplen must be 0 (whole frames) or >= 64");
}

// Picks a fresh connection key (distinct from every earlier one in either direction).
FlowKeyV4 new_connection_key(const CampusProfile& p, Random& rng, absl::flat_hash_set<FlowKeyV4, FlowKeyHasher>& used) {
  const std::uint32_t host_mask = (1u << (32 - p.client_prefix_length)) - 1;
  for (;;) {
    const std::uint32_t client = (p.client_network & ~host_mask) | (1 + static_cast<std::uint32_t>(rng.below(host_mask - 1)));
    const std::uint32_t server = p.server_network + 1 + static_cast<std::uint32_t>(rng.below(p.servers));
    const auto client_port = static_cast<std::uint16_t>(32768 + rng.below(28232));
    const double protocol_draw = rng.unit();
    FlowKeyV4 key;
    if (protocol_draw < p.tcp_share) {
      key = FlowKeyV4::from_host(client, server, client_port, rng.chance(0.6) ? 443 : 80, ipproto::kTcp);
    } else if (protocol_draw < p.tcp_share + p.udp_share) {
      key = FlowKeyV4::from_host(client, server, client_port, rng.chance(0.7) ? 53 : 443, ipproto::kUdp);
    } else {
      const auto id = static_cast<std::uint16_t>(rng.next());
      key = FlowKeyV4::from_host(client, server, id, id, ipproto::kIcmp);
    }
    if (used.insert(key).second) return key;
  }
}

// Appends the packets of one connection (in order) with offsets from its start, and spreads them over
// its duration keeping them strictly increasing.
void schedule_connection(const CampusProfile& p, Random& rng, std::uint32_t index, const FlowKeyV4& key,
                         std::uint64_t start_ns, std::vector<Event>& events) {
  const std::size_t first = events.size();
  auto add = [&](bool from_server, std::uint8_t flags, std::uint16_t payload) {
    events.push_back({0, index, payload, flags, from_server});
  };
  using namespace tcpflag;
  if (key.protocol == ipproto::kTcp) {
    add(false, kSyn, 0);
    add(true, kSyn | kAck, 0);
    add(false, kAck, 0);
    const double scale = p.mean_data_packets * (p.pareto_shape - 1) / p.pareto_shape;
    const auto data = static_cast<std::uint32_t>(
        std::min<double>(p.max_data_packets, std::floor(rng.pareto(scale, p.pareto_shape))));
    for (std::uint32_t i = 0; i < data; ++i) {
      const bool download = rng.chance(0.7);
      const auto small = static_cast<std::uint16_t>(rng.below(400));
      add(download, kAck | kPsh, download ? (rng.chance(0.75) ? kMss : small) : small);
    }
    if (rng.chance(0.05)) {
      add(rng.chance(0.5), kRst | kAck, 0);
    } else {
      add(false, kFin | kAck, 0);
      add(true, kFin | kAck, 0);
      add(false, kAck, 0);
    }
  } else if (key.protocol == ipproto::kUdp) {
    const bool dns = to_host16(key.dst_port) == 53;
    const std::uint32_t exchanges = dns ? 1 : 1 + static_cast<std::uint32_t>(rng.exponential(p.mean_data_packets / 2));
    for (std::uint32_t i = 0; i < exchanges; ++i) {
      add(false, 0, static_cast<std::uint16_t>(dns ? 30 + rng.below(40) : 100 + rng.below(1100)));
      add(true, 0, static_cast<std::uint16_t>(dns ? 60 + rng.below(300) : 100 + rng.below(1100)));
    }
  } else {
    const std::uint32_t pings = 1 + static_cast<std::uint32_t>(rng.below(3));
    for (std::uint32_t i = 0; i < pings; ++i) {
      add(false, 0, 56);
      add(true, 0, 56);
    }
  }
  const std::size_t count = events.size() - first;
  const double duration_ns = std::max(rng.exponential(p.mean_duration_s) * 1e9, 20'000.0 * count);
  std::vector<std::uint64_t> offsets(count);
  for (std::size_t i = 1; i < count; ++i) offsets[i] = static_cast<std::uint64_t>(rng.unit() * duration_ns);
  std::sort(offsets.begin() + 1, offsets.end());
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) offsets[i] = std::max(offsets[i], offsets[i - 1] + 1);
    events[first + i].timestamp_ns = start_ns + offsets[i];
  }
}

std::size_t build_event_frame(const Event& event, Connection& connection, std::span<std::uint8_t> out) {
  const FlowKeyV4 key = event.from_server ? connection.key.reversed() : connection.key;
  FrameSpec spec;
  spec.key4 = key;
  spec.payload_bytes = event.payload;
  if (key.protocol == ipproto::kTcp) {
    std::uint32_t& seq = event.from_server ? connection.server_seq : connection.client_seq;
    const std::uint32_t peer_seq = event.from_server ? connection.client_seq : connection.server_seq;
    spec.tcp_flags = event.tcp_flags;
    spec.tcp_seq = seq;
    spec.tcp_ack = (event.tcp_flags & tcpflag::kAck) ? peer_seq : 0;
    seq += event.payload + ((event.tcp_flags & (tcpflag::kSyn | tcpflag::kFin)) ? 1 : 0);
  } else if (key.protocol == ipproto::kIcmp) {
    spec.icmp_type = event.from_server ? 0 : 8;  // echo reply / echo request
  }
  return build_frame(spec, out);
}

}  // namespace

PacketStore generate_campus(const CampusProfile& profile) {
  validate(profile);
  Random rng(profile.seed);
  absl::flat_hash_set<FlowKeyV4, FlowKeyHasher> used;
  used.reserve(profile.flows);
  std::vector<Connection> connections(profile.flows);
  std::vector<Event> events;
  events.reserve(static_cast<std::size_t>(profile.flows) * static_cast<std::size_t>(profile.mean_data_packets + 8));

  double arrival_s = 0;
  for (std::uint32_t i = 0; i < profile.flows; ++i) {
    if (i > 0) arrival_s += rng.exponential(1.0 / profile.new_flows_per_second);
    const FlowKeyV4 key = new_connection_key(profile, rng, used);
    connections[i] = {key, static_cast<std::uint32_t>(rng.next()), static_cast<std::uint32_t>(rng.next())};
    schedule_connection(profile, rng, i, key, static_cast<std::uint64_t>(arrival_s * 1e9), events);
  }
  // Within a connection timestamps strictly increase, so sorting by (time, connection) keeps its order.
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.timestamp_ns != b.timestamp_ns ? a.timestamp_ns < b.timestamp_ns : a.connection < b.connection;
  });

  PacketStore store(LinkType::ethernet);
  const std::size_t stored_max = profile.snaplen == 0 ? 1600 : profile.snaplen;
  store.reserve(events.size(), events.size() * std::min<std::size_t>(stored_max, 128));
  std::vector<std::uint8_t> frame(1600);
  for (const Event& event : events) {
    const std::size_t size = build_event_frame(event, connections[event.connection], frame);
    const std::size_t stored = std::min(size, stored_max);
    store.append({frame.data(), stored}, event.timestamp_ns, static_cast<std::uint32_t>(size));
  }
  return store;
}

}  // namespace flowtrack
