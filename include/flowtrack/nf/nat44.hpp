// "nat": carrier-grade NAT44 (NAPT), one instance per core ([mt-nat]'s per-core duplication).
//
// Sides, by port where the packet came through one (NfPacket::arrival: a live port's role):
//  - from the inside port, a packet must come from the inside network, else it is dropped as
//    spoofed_source (BCP 38: no forged source leaves through the NAT); it goes out, unless it is for
//    the inside network too (routing between inside networks: it passes untouched);
//  - from the outside port, a packet must be addressed to a pool address, else it is dropped as
//    not_to_pool whatever its destination (an inside host, or any other: the outside reaches inside
//    only through a mapping), and must not come from the inside network or the pool (spoofed_source);
//    it comes in, and then goes on only through a mapping that admits it (below).
// By address on a replay, where no port says which side a packet came from: a packet whose source is
// in the inside network and whose destination is not goes out; a packet to an address of the public
// pool comes in; anything else touches neither the inside network (as its source) nor the pool and
// passes untouched, counted as passed (NfCounters::passed counts nothing else for the NAT).
//
// Mappings (RFC 4787 REQ-1, RFC 5382 REQ-1: endpoint-independent mapping): an inside endpoint
// (address, port or ICMP identifier, protocol) gets one external endpoint for all the remote endpoints
// it talks to, for as long as it has sessions. The external address is chosen by the inside address
// (paired pooling, RFC 4787 REQ-2: all of a subscriber's mappings use one public address); the
// external port comes from this core's slice of the port range (port_allocator.hpp: the inside port
// when free, else a random one; never two mappings on one port, REQ-3/5382 REQ-7). So a reply's
// destination port names the core that owns its mapping: steer inbound packets by owner_of_port().
//
// Sessions: one connection of the tracker per (inside endpoint, remote endpoint): the original tuple
// as the inside host sent it, the reply tuple as the remote answers (to the external endpoint); both
// directions find the session in one lookup, and the session's payload names its mapping. Session
// timeouts default to RFC minimums (nat_timeouts()); a mapping lives while it has sessions and its
// port goes into quarantine when the last one ends (RFC 6888 REQ-8). Nothing leaks: every session
// ends by timeout or RST, and the last session's end frees the mapping.
//
// Inbound packets without a session: allowed to create one only through an existing mapping, and then
// by the filtering (RFC 4787 REQ-8): endpoint-independent (anyone may reach a mapped endpoint) or
// address-dependent (only an address the inside endpoint has sent to). Otherwise dropped and counted
// (an unsolicited SYN gets no answer: RFC 5382 REQ-4).
//
// ICMP errors (RFC 5508): an error about a translated packet is translated with the packet it quotes
// (outer address, quoted address and port, every checksum), and never ends or refreshes a session
// (RFC 4787 REQ-12, RFC 5382 REQ-9/10). An error must come from the side its quoted packet went to
// (from outside to the external address, or from inside); one that does not is dropped.
//
// Hairpinning (RFC 4787 REQ-9, RFC 5382 REQ-8, RFC 7857 for ICMP): an inside host sending to a public
// endpoint of the NAT reaches the inside host behind that mapping, from its own external endpoint. For
// an ICMP query the "endpoint" is the external identifier, and the peer sees its own inside identifier;
// an ICMP error about a hairpinned packet is translated on both of its ends.
//
// Port exhaustion (RFC 6888 REQ-11): a new mapping that finds no port is dropped and counted; no
// existing mapping is evicted. A full session table likewise. A per-subscriber quota (REQ-4) caps the
// mappings of one inside address. A mapping refused for either may be answered with an ICMP type 3
// code 13 to the inside host (icmp_on_exhaustion), from its paired public address (the NAT's own
// address on its side: the inside host learns that the NAT, not the remote, refused); an ICMP error is
// never answered (it never creates a mapping), and an unsolicited inbound packet never is either.
//
// Fragments (RFC 4787 REQ-14), without reassembly: a first fragment is translated like any packet (it
// has the ports) and its translation is remembered by the datagram's (source, destination, protocol, IP
// identification); later fragments get the same addresses. A later fragment that comes before its first
// one waits, bounded, and leaves right after the first one, translated (BurstOutput::held). No room, or no
// first fragment within fragment_timeout: counted drops (fragment_full, fragment_timeout).
// Other packets without ports are dropped and counted as untranslatable.
//
// Port blocks (block_size, internal/external_ports.hpp): an inside address's ports then come from blocks
// of its paired public address, one record per block given and taken back into an attached
// PortBlockLog (port_block_log.hpp); a new block without room for its record is refused (log_full).
//
// State as plain data (nat_snapshot.hpp): snapshot() and restore() carry the mappings, sessions, blocks
// and quarantines over to a fresh instance (a restart's state file, a pair's standby). With an event
// sink (Events, nat_events.hpp), every session's opening, protocol change (and a refresh at most every
// kSyncRefresh while packets keep it alive) and end is emitted for a pair's standby.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "flowtrack/conntrack/conn_tracker.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/burst_matches.hpp"
#include "flowtrack/nf/icmp_answer.hpp"
#include "flowtrack/nf/internal/external_ports.hpp"
#include "flowtrack/nf/internal/fragment_cache.hpp"
#include "flowtrack/nf/internal/fragment_hold.hpp"
#include "flowtrack/nf/nat_events.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"
#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/rewrite.hpp"
#include "flowtrack/table/huge_page_allocator.hpp"
#include "flowtrack/table/id_pool.hpp"

namespace flowtrack {

struct NatMapping {
  std::uint32_t inside_addr = 0, external_addr = 0;  // network order
  std::uint16_t inside_port = 0, external_port = 0;  // network order
  std::uint8_t protocol = 0;
  std::uint32_t sessions = 0;
};

struct NatSession {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t mapping = kNone;          // the inside endpoint that opened it
  std::uint32_t hairpin_mapping = kNone;  // a hairpinned session: the mapping of the inside peer
  Nanos synced_at = 0;                    // with an event sink: when its last event was emitted
};

// The per-packet maps of a large NAT: their slot arrays in huge pages, as the tracker's tables.
template <class Key, class Value>
using HugePageHashMap = absl::flat_hash_map<Key, Value, absl::Hash<Key>, std::equal_to<Key>,
                                            HugePageAllocator<std::pair<const Key, Value>>>;

// Table: the session table; Aging: the tracker's expiry policy (conn_tracker.hpp); Events: where the
// sessions' changes go (nat_events.hpp; none by default).
template <FlowTable Table, AgingPolicy Aging = TimerWheel, NatEventSink Events = NoNatEvents>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
class Nat44 {
 public:
  // The instance for core `core` of `cores`. Throws std::invalid_argument for an empty pool or a port
  // range with fewer ports than cores.
  Nat44(const NatConfig& config, unsigned core, unsigned cores, Nanos start = 0);

  // Two stages: lookup (the sessions of every IPv4 packet that may be of an ordinary connection, in
  // bulk), then per packet in order its side, its translation (opening the session and mapping of a
  // first packet) and the fragments it releases. The translation rewrites the frame at once: a first
  // fragment's translation is read back from it for the fragments that follow. The lookup does not
  // wait for the side, whose pool lookup a found session mostly spares (side_of).
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    matches_.lookup(sessions_, burst, [&](std::size_t i) {
      const ParsedPacket& p = burst[i].parsed;
      return p.ip_version == 4 && p.fragment_offset == 0 && !p.icmp_is_error && p.has_ports;
    });
    prefetch_mappings(burst);
    out.stage_done(NfStage::lookup);
    for (std::size_t i = 0; i < burst.size(); ++i) {
      out.verdict(burst[i], translate_packet(burst[i], i));
      // The fragments that waited for this packet (a first fragment) go right after it.
      const std::size_t n = held_.release([&](std::span<const std::uint8_t> frame, std::uint32_t wire_length) { out.held(frame, wire_length); });
      counters_.rewritten += n;
      counters_.forwarded += n;
    }
    out.stage_done(NfStage::state);
  }
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget);

  bool is_inside(std::uint32_t addr) const { return (to_host32(addr) & inside_mask_) == inside_net_; }
  bool is_public(std::uint32_t addr) const { return pool_index(addr) != kNotInPool; }

  const NfCounters& counters() const { return counters_; }
  const ConnTracker<Table, NatSession, Aging>& sessions() const { return sessions_; }
  // Where the sessions' changes go (nat_events.hpp).
  Events& events() { return events_; }
  const Events& events() const { return events_; }
  std::size_t mapping_count() const { return mapping_ids_.in_use(); }
  // The memory the per-packet lookups range over: the sessions (table, connections, timers), the
  // mappings and the two maps that find them (their slots and control bytes, at capacity).
  std::size_t state_bytes() const {
    const auto map_bytes = [](const auto& map) {
      return map.capacity() * (sizeof(typename std::decay_t<decltype(map)>::value_type) + 1);
    };
    return sessions_.memory_bytes() + mappings_.capacity() * sizeof(NatMapping) + map_bytes(by_inside_) + map_bytes(remotes_);
  }
  // The mapping of an inside endpoint (network order), if any.
  const NatMapping* mapping_of(std::uint32_t inside_addr, std::uint16_t inside_port, std::uint8_t protocol) const;
  // The external endpoint (address, port or identifier; network order) that a packet seen inside as
  // `inside_view` (remote -> inside host) was sent to outside, from the session of its connection:
  // how a trace captured on the inside link is replayed through the NAT. False when no session has it.
  bool external_endpoint_of(const FlowKeyV4& inside_view, std::uint32_t& addr, std::uint16_t& port) const {
    const FlowKeyV4 original = inside_view.reversed();
    const ConnMatch match = sessions_.find(original, flow_hash(original));
    if (!match || match.direction != Direction::original) return false;
    const NatMapping& m = mappings_[sessions_.payload(match.conn).mapping];
    addr = m.external_addr;
    port = m.external_port;
    return true;
  }
  // Port by port (block_size 0): the external endpoint (network order) a new mapping of this inside
  // endpoint (network order) gets while its port is free: the paired public address, and the inside
  // port if this core's slice has it, else the first of its keyed candidates (port_allocator.hpp).
  // False with blocks. A load whose inside endpoints never share a first choice is translated alike
  // whatever order its mappings are made in (trace ports).
  bool first_external_endpoint(std::uint32_t inside_addr, std::uint16_t inside_port, std::uint8_t protocol, std::uint32_t& addr,
                               std::uint16_t& port) const {
    const std::size_t pool = pool_of(inside_addr);
    const std::uint16_t chosen = ports_of(pool).first_choice(inside_addr, protocol, to_host16(inside_port));
    if (chosen == 0) return false;
    addr = config_.pool[pool];
    port = to_network16(chosen);
    return true;
  }
  std::uint16_t port_first() const { return slice_first_; }
  std::uint16_t port_last() const { return slice_last_; }

  // With block_size: the records of the port blocks given and taken back go to `log` from now on
  // (port_block_log.hpp; nullptr: none). False, with nothing attached, when the log has no room for the
  // release records the blocks already held owe it. A log of 2 * block_count() records or more never
  // refuses a block while its reader keeps up.
  bool attach_block_log(PortBlockLog* log) {
    if (log != nullptr && !log->adopt_held_blocks(blocks_held())) return false;
    for (ExternalPorts& ports : ports_) ports.attach_log(log);
    return true;
  }
  // The state as plain data at `now` (nat_snapshot.hpp): what a restart or a standby carries over.
  NatSnapshot snapshot(Nanos now) const;
  // Puts a snapshot back into this instance, which must be fresh (no mapping yet), at `now`. A record
  // may not fit this instance (an address outside its pool, a port outside its slice or taken twice, a
  // session naming no mapping...): RestoreMode::whole (a state file) then throws std::invalid_argument
  // naming it, and the instance is unusable; RestoreMode::what_fits (a standby taking over from its copy,
  // which may lag its active's) leaves it out, with what depends on it. Returns the records left out.
  std::size_t restore(const NatSnapshot& snapshot, Nanos now, RestoreMode mode = RestoreMode::whole);

  // The blocks of this instance's slices, every public address together (0 port by port), and those held.
  std::size_t block_count() const { return sum_over_blocks([](const PortBlocks& b) { return b.block_count(); }); }
  std::size_t blocks_held() const { return sum_over_blocks([](const PortBlocks& b) { return b.blocks_held(); }); }

 private:
  static constexpr std::size_t kNotInPool = ~std::size_t{0};
  static constexpr std::uint32_t kNone = NatSession::kNone;

  // The index of a public address in the pool (a hash lookup: every inbound packet asks), or kNotInPool.
  std::size_t pool_index(std::uint32_t addr) const {
    const auto it = pool_index_.find(addr);
    return it == pool_index_.end() ? kNotInPool : it->second;
  }
  template <class Count>
  std::size_t sum_over_blocks(Count&& count) const {
    std::size_t n = 0;
    for (const ExternalPorts& ports : ports_) {
      if (const PortBlocks* blocks = ports.blocks()) n += count(*blocks);
    }
    return n;
  }
  // Paired pooling: the inside address alone picks the public address.
  std::size_t pool_of(std::uint32_t inside_addr) const {
    return flow_hash(FlowKeyV4{.src_addr = inside_addr}) % config_.pool.size();
  }
  ExternalPorts& ports_of(std::size_t pool) { return ports_[pool]; }
  const ExternalPorts& ports_of(std::size_t pool) const { return ports_[pool]; }
  // The mapping of an external endpoint (network order), kNone if none: its port's holder.
  std::uint32_t mapping_at(std::uint32_t external_addr, std::uint16_t external_port, std::uint8_t protocol) const {
    const std::size_t pool = pool_index(external_addr);
    if (pool == kNotInPool) return kNone;
    const std::uint32_t holder = ports_of(pool).holder_of(protocol, to_host16(external_port));
    return holder == ExternalPorts::kNoHolder ? kNone : holder;
  }

  // Out: from the inside network to elsewhere; in: to an address of the public pool; none: neither.
  // `match` is the packet's session, if any: one found in the reply direction says the destination is
  // public without the pool lookup, since every reply tuple is addressed to a mapping's external address.
  enum class Side : std::uint8_t { none, out, in };
  bool is_outbound(const FlowKeyV4& key) const { return is_inside(key.src_addr) && !is_inside(key.dst_addr); }
  // The port rule (the sides above) for a packet that came through a port with the NAT's role `arrival`
  // and whose lookup found `match`: the drop it earns, if any. Any other role leaves it to the addresses.
  [[gnu::always_inline]] inline std::optional<NfDrop> refused_by_port(const ParsedPacket& p, PortRole arrival, ConnMatch match) const;
  Side side_of(const ParsedPacket& p, ConnMatch match) const {
    if (p.ip_version != 4) return Side::none;
    if (is_outbound(p.key4)) return Side::out;
    if (match && match.direction == Direction::reply) return Side::in;
    return is_public(p.key4.dst_addr) ? Side::in : Side::none;
  }
  // The lookup stage's second wave: the mapping each packet's translation will read (a found session's
  // mapping record; for a first packet, the endpoint map entry that finds or makes its mapping), so that
  // the burst's misses on them overlap; and what the sessions those first packets open will write.
  // Waits on the session records the first wave prefetched.
  void prefetch_mappings(std::span<const NfPacket> burst) const;
  // For a packet going out without a session, the nth of the burst: what its opening will read and write.
  void prefetch_outbound_opening(const FlowKeyV4& key, std::size_t nth) const;
  // burst[i] of process_burst: its verdict, counted. It, translate_connection() and translate() are the
  // established path of every packet, inlined into the burst's loop: a call each cost more than their
  // bodies' savings.
  [[gnu::always_inline]] inline Verdict translate_packet(NfPacket& packet, std::size_t i);
  // Translates a packet of an ordinary connection going `side` whose lookup found `match` (empty: a
  // first packet, opened here) and returns forward (translate_packet() counts it), else a counted drop.
  [[gnu::always_inline]] inline Verdict translate_connection(NfPacket& packet, ConnMatch match, Side side);
  // A connection's first packet, out of line: the mapping (found or made), the session. An empty match
  // when refused, with the packet's verdict in `refused` (a counted drop, or an ICMP answer).
  [[gnu::noinline]] ConnMatch open_outbound(NfPacket& packet, const FlowKeyV4& key, std::uint32_t hash, Nanos now,
                                            Verdict& refused);
  [[gnu::noinline]] ConnMatch open_inbound(const NfPacket& packet, const FlowKeyV4& key, std::uint32_t hash, Nanos now,
                                           Verdict& refused);
  // The address-dependent filter's key: a mapping and a remote address it has sent to.
  static std::uint64_t remote_key(std::uint32_t mapping, std::uint32_t remote_addr) {
    return (std::uint64_t{mapping} << 32) | remote_addr;
  }
  Verdict icmp_error(NfPacket& packet);
  // A fragment other than the first: translated as its first fragment was, else held for it.
  Verdict later_fragment(NfPacket& packet, Nanos now);
  // A translated first fragment: its translation is remembered for the later fragments, and the ones
  // already waiting are translated. False when the cache has no room.
  bool remember_first_fragment(const NfPacket& packet, Nanos now);
  static void rewrite_addresses(std::span<std::uint8_t> frame, const ParsedPacket& p, const FragmentTranslation& t);
  // The mapping of the packet's inside endpoint, created if need be; kNone with the reason when refused.
  std::uint32_t find_or_create_mapping(const FlowKeyV4& key, Nanos now, NfDrop& refusal);
  // A new mapping for the packet's inside endpoint (quota, id, port), not yet in by_inside_.
  std::uint32_t create_mapping(const FlowKeyV4& key, Nanos now, NfDrop& refusal);
  // Counts the refusal of a new mapping and, if configured, turns the packet into the ICMP answer.
  Verdict refuse(NfPacket& packet, NfDrop refusal);
  void drop_mapping_if_unused(std::uint32_t id, Nanos now);
  // With an event sink: the event of a session just opened, or of one whose packet changed its state or
  // whose copy on a standby is older than kSyncRefresh. `tcp` and `replied`: its state before the packet.
  [[gnu::always_inline]] inline void report(ConnId conn, bool opened, TcpTracking tcp, bool replied, Nanos now);
  [[gnu::noinline]] void emit_session(NatEvent::Kind kind, ConnId conn, Nanos now);
  NatSnapshot::Mapping mapping_record(std::uint32_t id) const {
    if (id == kNone) return {};
    const NatMapping& m = mappings_[id];
    return {m.inside_addr, m.external_addr, m.inside_port, m.external_port, m.protocol};
  }
  // Rewrites a packet of session `s` travelling in `direction` (translation both ways for hairpins).
  [[gnu::always_inline]] inline void translate(NfPacket& packet, const NatSession& s, Direction direction);

  NatConfig config_;
  std::uint32_t inside_net_, inside_mask_;  // host order
  std::uint16_t slice_first_, slice_last_;
  ConnTracker<Table, NatSession, Aging> sessions_;
  HugePageVector<NatMapping> mappings_;
  IdPool mapping_ids_;
  HugePageHashMap<std::uint64_t, std::uint32_t> by_inside_;  // inside endpoint -> mapping id
  // (The external endpoints' mappings are the holders of their ports: mapping_at().)
  HugePageHashMap<std::uint64_t, std::uint32_t> remotes_;  // (mapping, remote address) -> sessions
  // (inside address, protocol) -> its mappings; kept only with a quota, an entry per subscriber with one.
  absl::flat_hash_map<std::uint64_t, std::uint32_t> subscriber_mappings_;
  std::vector<ExternalPorts> ports_;  // by pool index
  absl::flat_hash_map<std::uint32_t, std::size_t> pool_index_;  // public address -> its index in the pool
  FragmentCache fragments_;
  FragmentHold held_;
  NfCounters counters_;
  BurstMatches<ConnTracker<Table, NatSession, Aging>> matches_;
  [[no_unique_address]] Events events_;
};

}  // namespace flowtrack

#include "flowtrack/nf/internal/nat44_impl.hpp"
