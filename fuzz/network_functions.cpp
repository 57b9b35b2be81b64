// libFuzzer target: bursts of arbitrary frames through every network function (fwd, slb, lb, nat,
// concury: its pool changes every few seconds, its control plane forgets after five), each
// burst through process_burst as the runtime gives it, the functions keeping their state across inputs
// (connections, backend counts, timers), so sequences of odd packets are exercised too.
// The first input byte steers: bit 0 aims the frame at a service (VIP:443 or :53), bit 1 makes it
// come from a backend (a reply), bits 2-4 pick the link type, bits 5-7 add that many more copies of the
// frame to the burst, alternately as the reply (bit 1 flipped) and as the same packet again, so a burst
// holds a connection's first packet with its answers and retransmissions. The rest is the frame. Time
// moves one second per input, so connections also expire; the port the burst arrived on turns with it
// through every role (none, as on a replay, then inside, outside, clients, backends), so each function
// meets its own boundary rules and the other functions' roles. Must never crash, never read or write out of
// bounds, and forwarded, answered (reply) and released (held fragments) frames must still parse.
// Concury runs twice, its control plane on the worker and on a thread of its own: both must give every
// packet the same verdict and frame, and expire the same connections. The load balancers run again with
// their services in tunnel mode (GUE, a small MTU: packets too big for it are answered), with headroom
// for the outer headers (the frame starts earlier), with room after the frame only, and with neither.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace {

using namespace flowtrack;

std::vector<ServiceConfig> services(ForwardMode forward = ForwardMode::nat) {
  std::vector<ServiceConfig> out;
  for (const auto& [port, protocol] : {std::pair{443, ipproto::kTcp}, std::pair{53, ipproto::kUdp}}) {
    ServiceConfig s{"svc", to_network32(0xc6120001), to_network16(static_cast<std::uint16_t>(port)), protocol, {}};
    s.backends.push_back({"a", to_network32(0x0a000101), to_network16(8080), 1});
    s.backends.push_back({"b", to_network32(0x0a000102), 0, 2});
    if (forward != ForwardMode::nat) {
      s.tunnel = {forward, to_network32(0x0a000164), to_network16(kDefaultGuePort), 576};
      for (BackendConfig& b : s.backends) b.port = 0;  // a tunnel keeps the client's destination port
    }
    out.push_back(s);
  }
  return out;
}

StatefulLbConfig concury_config() {
  StatefulLbConfig c;
  c.services = services();
  // Small: each pool change (one every three inputs) refills a service's arrays, sized for its share of
  // these. At the default (1M) the refills took most of the fuzzer's time: 117 inputs a second, against
  // 1 950 with this.
  c.max_connections = 2048;
  c.maglev_size = 251;
  c.timeouts.tcp.fill(5 * kNanosPerSecond);
  c.timeouts.udp_unreplied = c.timeouts.udp_replied = c.timeouts.icmp = c.timeouts.other = 5 * kNanosPerSecond;
  return c;
}

// Concury's schedule, applied between inputs as a replay applies it between bursts: each kind of
// change, then again, so the pools change all the time and pins come and go.
PoolChangeSchedule concury_changes() {
  const BackendConfig a{"a", to_network32(0x0a000101), to_network16(8080), 1};
  std::vector<PoolChange> changes;
  for (Nanos round = 0; round < 1000; ++round) {
    const Nanos t = round * 12 * kNanosPerSecond;
    changes.push_back({t + 3 * kNanosPerSecond, "svc", PoolAction::drain, {"b", 0, 0, 0}});
    changes.push_back({t + 6 * kNanosPerSecond, "svc", PoolAction::weight, {"b", 0, 0, 3}});
    changes.push_back({t + 9 * kNanosPerSecond, "svc", PoolAction::remove, a});
    changes.push_back({t + 12 * kNanosPerSecond, "svc", PoolAction::add, a});
  }
  return PoolChangeSchedule(std::move(changes), services(), 251);
}

struct Functions {
  Forwarder fwd;
  StatelessLb slb{StatelessLbConfig{services(), StatelessSelection::maglev, 251}};
  StatefulLb<CuckooTable<FlowKeyV4>> lb{[] {
    StatefulLbConfig c;
    c.services = services();
    c.max_connections = 64;  // small: the fuzzer fills it and meets the full-table paths
    c.maglev_size = 251;
    c.timeouts.tcp.fill(5 * kNanosPerSecond);
    return c;
  }()};
  StatelessLb slb_tunnel{StatelessLbConfig{services(ForwardMode::gue), StatelessSelection::maglev, 251}};
  StatefulLb<CuckooTable<FlowKeyV4>> lb_tunnel{[] {
    StatefulLbConfig c;
    c.services = services(ForwardMode::ipip);
    c.max_connections = 64;
    c.stateless_when_full = true;  // first packets of a full table through the tunnel too
    c.maglev_size = 251;
    return c;
  }()};
  ConcuryLb concury{concury_config(), ControlPlanePlace::worker};
  ConcuryLb concury_own_thread{concury_config(), ControlPlanePlace::own_thread};
  PoolChangeSchedule concury_schedule = concury_changes(), concury_own_thread_schedule = concury_changes();
  Nat44<CuckooTable<FlowKeyV4>> nat{[] {
    NatConfig c;
    c.inside_network = to_network32(0x0a000000);
    c.inside_prefix_length = 8;
    c.pool = {to_network32(0xc6120001)};  // the VIP doubles as the public address: inbound paths too
    c.port_first = 1024;
    c.port_last = 1100;  // small: exhaustion and quarantine are reached
    c.max_sessions = 64;
    c.max_mappings = 32;
    c.port_quota = 8;  // refusals by the quota and by exhaustion, answered with ICMP when the frame has room
    c.icmp_on_exhaustion = true;
    c.fragment_datagrams = 4;  // small: fragments find the cache and the hold full, and time out
    c.fragments_held = 4;
    c.fragment_timeout = 3 * kNanosPerSecond;
    c.timeouts.tcp.fill(5 * kNanosPerSecond);
    return c;
  }(), 0, 1};
  Nanos now = 0;
};

void expect_parses(std::span<const std::uint8_t> frame, LinkType link) {
  ParsedPacket after;
  if (parse_frame(frame, link, after) != ParseStatus::ok) __builtin_trap();  // a rewrite broke the frame
}

// Checks each verdict's frame as the function hands it over.
struct ParsingOutput {
  LinkType link;
  void verdict(const NfPacket& packet, Verdict verdict) const {
    if (verdict == Verdict::forward || verdict == Verdict::reply) expect_parses(packet.frame, link);
  }
  // A held fragment came with an earlier input, whose link type may differ from this one's.
  void held(std::span<const std::uint8_t> frame, std::uint32_t) const {
    ParsedPacket after;
    for (const LinkType held_link : kLinkTypes) {
      if (parse_frame(frame, held_link, after) == ParseStatus::ok) return;
    }
    __builtin_trap();
  }
  void stage_done(NfStage) const {}
};

// Bytes writable around each frame: before it (NfPacket::headroom), for a tunnel's headers, and after
// it (NfPacket::capacity), for a function that answers a packet or a tunnel without headroom.
struct Room {
  std::uint16_t before = 0;
  std::size_t after = 0;
};

// One copy of the input's frame in `buffer` (exact size plus `room`: ASan sees any access outside it),
// aimed as `control` says; false when it does not parse.
bool prepare(NfPacket& packet, std::vector<std::uint8_t>& buffer, const std::vector<std::uint8_t>& input, LinkType link,
             std::uint8_t control, Nanos now, Room room) {
  buffer.assign(room.before, 0);
  buffer.insert(buffer.end(), input.begin(), input.end());
  buffer.resize(buffer.size() + room.after);
  packet = NfPacket{.frame = std::span(buffer).subspan(room.before, input.size()),
                    .wire_length = static_cast<std::uint32_t>(input.size()),
                    .capacity = input.size() + room.after,
                    .headroom = room.before,
                    .time = now,
                    .arrival = static_cast<PortRole>(now / kNanosPerSecond % 5)};
  if (parse_frame(packet.frame, link, packet.parsed) != ParseStatus::ok) return false;
  if (packet.parsed.ip_version == 4 && packet.parsed.has_ports && (control & 3) != 0) {
    const bool udp = packet.parsed.protocol() == ipproto::kUdp;
    if (control & 1) {
      rewrite_ipv4_dst(packet.frame, packet.parsed, to_network32(0xc6120001));
      rewrite_dst_port(packet.frame, packet.parsed, to_network16(udp ? 53 : 443));
    }
    if (control & 2) {
      rewrite_ipv4_src(packet.frame, packet.parsed, to_network32(0x0a000101));
      rewrite_src_port(packet.frame, packet.parsed, to_network16(8080));
    }
    if (parse_frame(packet.frame, link, packet.parsed) != ParseStatus::ok) __builtin_trap();
  }
  packet.hash = packet_hash(packet.parsed);
  return true;
}

// The input's burst: up to 8 copies of its frame, aimed as `control` says, each with `room` around it.
struct Burst {
  std::array<std::vector<std::uint8_t>, 8> buffers;
  std::array<NfPacket, 8> packets;
  std::size_t size = 0;

  Burst(const std::vector<std::uint8_t>& input, LinkType link, std::uint8_t control, Nanos now, Room room) {
    const std::size_t copies = 1 + (control >> 5);
    for (std::size_t c = 0; c < copies; ++c) {
      const std::uint8_t aim = c % 2 == 1 ? control ^ 2 : control;  // odd copies: the reply
      if (prepare(packets[size], buffers[size], input, link, aim, now, room)) ++size;
    }
  }
  std::span<NfPacket> span() { return std::span(packets).first(size); }
};

template <class Nf>
void through(Nf& nf, const std::vector<std::uint8_t>& input, LinkType link, std::uint8_t control, Nanos now, Room room = {}) {
  Burst burst(input, link, control, now, room);
  ParsingOutput out{link};
  if (burst.size != 0) nf.process_burst(burst.span(), out);
  nf.expire(now);
}

// Concury in both places: the same verdicts, the same frames out, the same connections expired.
void through_both_places(ConcuryLb& on_worker, ConcuryLb& on_thread, const std::vector<std::uint8_t>& input, LinkType link,
                         std::uint8_t control, Nanos now) {
  // ParsingOutput's checks, and the verdicts kept in order.
  struct Recording : ParsingOutput {
    std::vector<Verdict> verdicts;
    void verdict(const NfPacket& packet, Verdict v) {
      ParsingOutput::verdict(packet, v);
      verdicts.push_back(v);
    }
  };
  Burst a(input, link, control, now, {}), b(input, link, control, now, {});
  Recording out_a{{link}, {}}, out_b{{link}, {}};
  if (a.size != 0) on_worker.process_burst(a.span(), out_a);
  if (b.size != 0) on_thread.process_burst(b.span(), out_b);
  if (out_a.verdicts != out_b.verdicts) __builtin_trap();  // the places disagree
  for (std::size_t i = 0; i < a.size; ++i) {
    if (!std::ranges::equal(a.packets[i].frame, b.packets[i].frame)) __builtin_trap();
  }
  if (on_worker.expire(now) != on_thread.expire(now)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Functions functions;
  if (size < 1) return 0;
  const std::uint8_t control = data[0];
  const LinkType link = kLinkTypes[(control >> 2) & 7];
  const std::vector<std::uint8_t> frame(data + 1, data + size);
  functions.now += kNanosPerSecond;
  through(functions.fwd, frame, link, control, functions.now);
  through(functions.slb, frame, link, control, functions.now);
  through(functions.lb, frame, link, control, functions.now);
  // Room for the outer headers before the frame, after it, or neither, as the input's length says.
  constexpr std::array<Room, 3> kTunnelRooms{{{.before = 64, .after = 0}, {.before = 0, .after = 64}, {}}};
  const Room tunnel_room = kTunnelRooms[size % kTunnelRooms.size()];
  through(functions.slb_tunnel, frame, link, control, functions.now, tunnel_room);
  through(functions.lb_tunnel, frame, link, control, functions.now, tunnel_room);
  apply_due_changes(functions.concury_schedule, functions.concury, functions.now);
  apply_due_changes(functions.concury_own_thread_schedule, functions.concury_own_thread, functions.now);
  through_both_places(functions.concury, functions.concury_own_thread, frame, link, control, functions.now);
  through(functions.nat, frame, link, control, functions.now, {.after = 64});
  return 0;
}
