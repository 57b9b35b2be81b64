// Nat44's member functions (the class and its contract are in nat44.hpp).
#pragma once

#include <fmt/format.h>

#include <stdexcept>

namespace flowtrack {

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Nat44<Table, Aging, Events>::Nat44(const NatConfig& config, unsigned core, unsigned cores, Nanos start)
    : config_(config),
      inside_mask_(config.inside_prefix_length == 0 ? 0 : ~std::uint32_t{0} << (32 - config.inside_prefix_length)),
      sessions_(config.max_sessions, config.timeouts, connection_wheel(start)),
      mappings_(config.max_mappings),
      mapping_ids_(config.max_mappings),
      fragments_(config.fragment_datagrams, config.fragment_timeout),
      held_(config.fragments_held, config.fragment_timeout) {
  inside_net_ = to_host32(config.inside_network) & inside_mask_;
  if (config.pool.empty()) throw std::invalid_argument("nat: the public pool is empty");
  const unsigned range = static_cast<unsigned>(config.port_last) - config.port_first + 1;
  if (config.port_first == 0 || config.port_first > config.port_last || range < cores || core >= cores) {
    throw std::invalid_argument("nat: the port range must hold at least one port per core");
  }
  const unsigned slice = range / cores;
  slice_first_ = static_cast<std::uint16_t>(config.port_first + core * slice);
  slice_last_ = core + 1 == cores ? config.port_last : static_cast<std::uint16_t>(slice_first_ + slice - 1);
  by_inside_.reserve(config.max_mappings);
  remotes_.reserve(config.filtering == NatFiltering::address_dependent ? config.max_sessions : 0);
  subscriber_mappings_.reserve(config.port_quota != 0 ? config.max_mappings : 0);
  if (config.block_size > slice_last_ - slice_first_ + 1u) {
    throw std::invalid_argument(fmt::format("nat: a block of {} ports is more than a worker's slice of the range ({} ports)",
                                            config.block_size, slice_last_ - slice_first_ + 1u));
  }
  ports_.reserve(config.pool.size());
  for (std::size_t p = 0; p < config.pool.size(); ++p) {
    pool_index_.try_emplace(config.pool[p], p);  // a duplicated address: its first place
    ports_.emplace_back(config.pool[p], slice_first_, slice_last_, config.block_size, config.port_quarantine,
                        config.seed * 977 + p * 3 + core * 7919);
  }
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
const NatMapping* Nat44<Table, Aging, Events>::mapping_of(std::uint32_t inside_addr, std::uint16_t inside_port, std::uint8_t protocol) const {
  const auto it = by_inside_.find(endpoint_key(inside_addr, inside_port, protocol));
  return it == by_inside_.end() ? nullptr : &mappings_[it->second];
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::prefetch_mappings(std::span<const NfPacket> burst) const {
  std::size_t openings = 0;
  for (std::size_t i = 0; i < burst.size(); ++i) {
    if (!matches_.looked_up(i)) continue;
    const FlowKeyV4& key = burst[i].parsed.key4;
    if (const ConnMatch found = matches_.prefetch_hint(i)) {
      __builtin_prefetch(&mappings_[sessions_.payload(found.conn).mapping]);
    } else if (is_outbound(key)) {
      prefetch_outbound_opening(key, openings++);
    } else {
      if (const std::size_t pool = pool_index(key.dst_addr); pool != kNotInPool) {
        ports_of(pool).prefetch_holder(key.protocol, to_host16(key.dst_port));
      }
    }
  }
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::prefetch_outbound_opening(const FlowKeyV4& key, std::size_t nth) const {
  by_inside_.prefetch(endpoint_key(key.src_addr, key.src_port, key.protocol));
  // If the inside endpoint has no mapping yet: the record of the id its mapping will take, and the
  // external endpoint it most likely gets (the inside port on the paired address: port_allocator.hpp
  // keeps the inside port when it is free), whose allocator entries and reply tuple's buckets the
  // opening then writes.
  if (const FlowId id = mapping_ids_.peek(nth); id != kNoFlow) __builtin_prefetch(&mappings_[id], 1);
  if (key.protocol != ipproto::kTcp && key.protocol != ipproto::kUdp) {
    sessions_.prefetch_create(nth);
    return;
  }
  const std::size_t pool = pool_of(key.src_addr);
  ports_of(pool).prefetch(key.protocol, to_host16(key.src_port));
  const std::uint32_t external = config_.pool[pool];
  const FlowKeyV4 reply{.src_addr = key.dst_addr, .dst_addr = external, .src_port = key.dst_port,
                        .dst_port = key.src_port, .protocol = key.protocol};
  sessions_.prefetch_create(nth, flow_hash(reply));
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::optional<NfDrop> Nat44<Table, Aging, Events>::refused_by_port(const ParsedPacket& p, PortRole arrival, ConnMatch match) const {
  if (arrival != PortRole::inside && arrival != PortRole::outside) return std::nullopt;
  if (p.ip_version != 4) return NfDrop::untranslatable;
  const FlowKeyV4& key = p.key4;
  if (arrival == PortRole::inside) {
    if (!is_inside(key.src_addr)) return NfDrop::spoofed_source;
    return std::nullopt;
  }
  if (is_inside(key.src_addr)) return NfDrop::spoofed_source;
  // A session's answer: from the remote it was opened with (never the pool: checked below when it
  // opened), to its mapping's external address. Every original tuple has an inside source, refused above.
  if (match && match.direction == Direction::reply) return std::nullopt;
  if (is_public(key.src_addr)) return NfDrop::spoofed_source;
  if (!is_public(key.dst_addr)) return NfDrop::not_to_pool;
  return std::nullopt;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging, Events>::translate_packet(NfPacket& packet, std::size_t i) {
  const ParsedPacket& p = packet.parsed;
  const ConnMatch match = matches_.looked_up(i) ? matches_.match(sessions_, i, packet) : ConnMatch{};
  if (packet.arrival != PortRole::unknown) {
    if (const std::optional<NfDrop> refusal = refused_by_port(p, packet.arrival, match)) return counters_.drop(*refusal);
  }
  const Side side = side_of(p, match);
  if (side == Side::none) return counters_.pass();
  if (p.fragment_offset != 0) return later_fragment(packet, packet.time);
  Verdict verdict;
  if (p.icmp_is_error) verdict = icmp_error(packet);
  else if (!p.has_ports) return counters_.drop(NfDrop::untranslatable);
  else verdict = translate_connection(packet, match, side);
  if (verdict != Verdict::forward) return verdict;
  if (p.is_fragment && !remember_first_fragment(packet, packet.time)) return counters_.drop(NfDrop::fragment_full);
  return counters_.rewrite();
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::rewrite_addresses(std::span<std::uint8_t> frame, const ParsedPacket& p, const FragmentTranslation& t) {
  if (t.src_addr != p.key4.src_addr) rewrite_ipv4_src(frame, p, t.src_addr);
  if (t.dst_addr != p.key4.dst_addr) rewrite_ipv4_dst(frame, p, t.dst_addr);
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging, Events>::later_fragment(NfPacket& packet, Nanos now) {
  const FragmentKey key = FragmentKey::of(packet.parsed);
  if (const FragmentTranslation* t = fragments_.find(key, now)) {
    rewrite_addresses(packet.frame, packet.parsed, *t);
    return counters_.rewrite();
  }
  if (!held_.hold(packet, key, now)) return counters_.drop(NfDrop::fragment_full);
  return Verdict::held;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
bool Nat44<Table, Aging, Events>::remember_first_fragment(const NfPacket& packet, Nanos now) {
  const FragmentKey key = FragmentKey::of(packet.parsed);  // the key as it arrived: parsed is not rewritten
  const std::uint8_t* ip = packet.frame.data() + packet.parsed.l3_offset;
  const FragmentTranslation t{load_raw<std::uint32_t>(ip + 12), load_raw<std::uint32_t>(ip + 16)};
  if (!fragments_.remember(key, t, now)) return false;
  held_.resolve(key, [&](std::span<std::uint8_t> frame, const ParsedPacket& p) { rewrite_addresses(frame, p, t); });
  return true;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::uint32_t Nat44<Table, Aging, Events>::find_or_create_mapping(const FlowKeyV4& key, Nanos now, NfDrop& refusal) {
  // One probe of the inside map for both the lookup and the insert: the slot is claimed at once and
  // given back if no mapping can be made (nothing is inserted into the map in between).
  const auto [slot, claimed] = by_inside_.try_emplace(endpoint_key(key.src_addr, key.src_port, key.protocol), kNone);
  if (!claimed) return slot->second;
  const std::uint32_t id = create_mapping(key, now, refusal);
  if (id == kNone) {
    by_inside_.erase(slot);
  } else {
    slot->second = id;
  }
  return id;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::uint32_t Nat44<Table, Aging, Events>::create_mapping(const FlowKeyV4& key, Nanos now, NfDrop& refusal) {
  const std::uint64_t subscriber = endpoint_key(key.src_addr, 0, key.protocol);
  if (config_.port_quota != 0) {
    const auto it = subscriber_mappings_.find(subscriber);
    if (it != subscriber_mappings_.end() && it->second >= config_.port_quota) {
      refusal = NfDrop::port_quota;
      return kNone;
    }
  }
  refusal = NfDrop::no_port;
  const FlowId id = mapping_ids_.allocate();
  if (id == kNoFlow) return kNone;
  const std::size_t pool = pool_of(key.src_addr);
  const std::uint16_t port = ports_of(pool).allocate(key.src_addr, key.protocol, to_host16(key.src_port), now, id, refusal);
  if (port == 0) {
    mapping_ids_.release(id);
    return kNone;
  }
  mappings_[id] = {key.src_addr, config_.pool[pool], key.src_port, to_network16(port), key.protocol, 0};
  if (config_.port_quota != 0) ++subscriber_mappings_[subscriber];
  return id;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging, Events>::refuse(NfPacket& packet, NfDrop refusal) {
  const Verdict dropped = counters_.drop(refusal);
  if (!config_.icmp_on_exhaustion) return dropped;
  const std::uint32_t source = config_.pool[pool_of(packet.parsed.key4.src_addr)];
  return answer_with_icmp_error(packet, icmp4::kDestinationUnreachable, icmp4::kAdministrativelyProhibited, source)
             ? Verdict::reply
             : dropped;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::drop_mapping_if_unused(std::uint32_t id, Nanos now) {
  NatMapping& m = mappings_[id];
  if (m.sessions != 0) return;
  by_inside_.erase(endpoint_key(m.inside_addr, m.inside_port, m.protocol));
  ports_of(pool_index(m.external_addr)).release(m.protocol, to_host16(m.external_port), now);
  mapping_ids_.release(id);
  if (config_.port_quota != 0) {
    const auto it = subscriber_mappings_.find(endpoint_key(m.inside_addr, 0, m.protocol));
    if (--it->second == 0) subscriber_mappings_.erase(it);
  }
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::translate(NfPacket& packet, const NatSession& s, Direction direction) {
  const NatMapping& own = mappings_[s.mapping];
  if (direction == Direction::original) {
    rewrite_ipv4_endpoint(packet.frame, packet.parsed, Endpoint::source, own.external_addr, own.external_port);
    if (s.hairpin_mapping != kNone) {
      const NatMapping& peer = mappings_[s.hairpin_mapping];
      rewrite_ipv4_endpoint(packet.frame, packet.parsed, Endpoint::destination, peer.inside_addr, peer.inside_port);
    }
  } else {
    if (s.hairpin_mapping != kNone) {
      const NatMapping& peer = mappings_[s.hairpin_mapping];
      rewrite_ipv4_endpoint(packet.frame, packet.parsed, Endpoint::source, peer.external_addr, peer.external_port);
    }
    rewrite_ipv4_endpoint(packet.frame, packet.parsed, Endpoint::destination, own.inside_addr, own.inside_port);
  }
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging, Events>::translate_connection(NfPacket& packet, ConnMatch match, Side side) {
  const bool opened = !match;
  if (opened) {
    Verdict refused = Verdict::drop;
    const FlowKeyV4& key = packet.parsed.key4;
    match = side == Side::out ? open_outbound(packet, key, packet.hash, packet.time, refused)
                              : open_inbound(packet, key, packet.hash, packet.time, refused);
    if (!match) return refused;
  }
  translate(packet, sessions_.payload(match.conn), match.direction);
  if constexpr (Events::kEnabled) {
    const auto& connection = sessions_.connection(match.conn);
    const TcpTracking tcp = connection.tcp;
    const bool replied = connection.replied;
    sessions_.update(match, packet.parsed, packet.wire_length, packet.time);
    report(match.conn, opened, tcp, replied, packet.time);
  } else {
    sessions_.update(match, packet.parsed, packet.wire_length, packet.time);
  }
  return Verdict::forward;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::report(ConnId conn, bool opened, TcpTracking tcp, bool replied, Nanos now) {
  const auto& connection = sessions_.connection(conn);
  if (opened) {
    emit_session(NatEvent::Kind::session_opened, conn, now);
  } else if (connection.tcp != tcp || connection.replied != replied || now - connection.payload.synced_at >= kSyncRefresh) {
    emit_session(NatEvent::Kind::session_refreshed, conn, now);
  }
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging, Events>::emit_session(NatEvent::Kind kind, ConnId conn, Nanos now) {
  NatSession& s = sessions_.payload(conn);
  NatEvent event{kind, sessions_.save(conn, now), {}, {}};
  if (kind == NatEvent::Kind::session_opened) {
    event.mapping = mapping_record(s.mapping);
    event.hairpin = mapping_record(s.hairpin_mapping);
  }
  s.synced_at = now;
  events_.emit(event);
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
ConnMatch Nat44<Table, Aging, Events>::open_outbound(NfPacket& packet, const FlowKeyV4& key, std::uint32_t hash, Nanos now,
                                            Verdict& refused) {
  // Hairpinning: the destination is a public endpoint of this NAT; the session leads to its inside host.
  std::uint32_t peer = kNone;
  if (is_public(key.dst_addr)) {
    peer = mapping_at(key.dst_addr, key.dst_port, key.protocol);
    if (peer == kNone) {
      refused = counters_.drop(NfDrop::no_mapping);
      return {};
    }
  }
  NfDrop refusal = NfDrop::no_port;
  const std::uint32_t id = find_or_create_mapping(key, now, refusal);
  if (id == kNone) {
    refused = refuse(packet, refusal);
    return {};
  }
  const NatMapping& m = mappings_[id];
  FlowKeyV4 reply = key;  // what the remote (or the hairpinned peer) sends back
  if (peer != kNone) {
    reply.src_addr = mappings_[peer].inside_addr;
    reply.src_port = mappings_[peer].inside_port;
  } else {
    reply.src_addr = key.dst_addr;
    reply.src_port = key.dst_port;
  }
  reply.dst_addr = m.external_addr;
  reply.dst_port = m.external_port;
  if (packet.parsed.icmp_is_query) {
    // A query has one identifier for both ends: the one its answerer sees, which is the external
    // identifier, or for a hairpin the peer's inside identifier (the last one translate() writes).
    reply.src_port = reply.dst_port = peer != kNone ? mappings_[peer].inside_port : m.external_port;
  }
  const CreateResult created = sessions_.create(key, hash, reply, flow_hash(reply), key.protocol, now);
  if (created.status != CreateStatus::created) {
    drop_mapping_if_unused(id, now);
    refused = counters_.drop(created.status == CreateStatus::full ? NfDrop::table_full : NfDrop::tuple_conflict);
    return {};
  }
  sessions_.payload(created.match.conn) = {id, peer};
  ++mappings_[id].sessions;
  if (peer != kNone) ++mappings_[peer].sessions;
  if (config_.filtering == NatFiltering::address_dependent) ++remotes_[remote_key(id, reply.src_addr)];
  ++counters_.connections_created;
  return created.match;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
ConnMatch Nat44<Table, Aging, Events>::open_inbound(const NfPacket& packet, const FlowKeyV4& key, std::uint32_t hash, Nanos now,
                                           Verdict& refused) {
  const std::uint32_t id = mapping_at(key.dst_addr, key.dst_port, key.protocol);
  if (id == kNone) {
    refused = counters_.drop(NfDrop::no_mapping);
    return {};
  }
  if (config_.filtering == NatFiltering::address_dependent && !remotes_.contains(remote_key(id, key.src_addr))) {
    refused = counters_.drop(NfDrop::filtered);
    return {};
  }
  const NatMapping& m = mappings_[id];
  FlowKeyV4 original = key;  // the session as if the inside host had opened it
  original.src_addr = m.inside_addr;
  original.src_port = m.inside_port;
  original.dst_addr = key.src_addr;
  original.dst_port = packet.parsed.icmp_is_query ? m.inside_port : key.src_port;
  const CreateResult created = sessions_.create(original, flow_hash(original), key, hash, key.protocol, now);
  if (created.status != CreateStatus::created) {
    refused = counters_.drop(created.status == CreateStatus::full ? NfDrop::table_full : NfDrop::tuple_conflict);
    return {};
  }
  sessions_.payload(created.match.conn) = {id, kNone};
  ++mappings_[id].sessions;
  if (config_.filtering == NatFiltering::address_dependent) ++remotes_[remote_key(id, key.src_addr)];
  ++counters_.connections_created;
  return {created.match.conn, Direction::reply};
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging, Events>::icmp_error(NfPacket& packet) {
  const ParsedPacket& p = packet.parsed;
  if (!p.has_embedded) return counters_.drop(NfDrop::untranslatable);
  // The quoted packet travelled the other way: its reversed tuple is the one this error's direction uses.
  const FlowKeyV4 quoted_reversed = p.embedded_key4.reversed();
  const ConnMatch match = sessions_.find(quoted_reversed, flow_hash(quoted_reversed));
  if (!match) return counters_.drop(NfDrop::untranslatable);
  const NatSession& s = sessions_.payload(match.conn);
  const NatMapping& own = mappings_[s.mapping];
  const bool hairpin = s.hairpin_mapping != kNone;
  // An error comes from the side its quoted packet went to: about a packet sent out (a reply-direction
  // match), addressed to the external address and, unless hairpinned, from outside; about a packet
  // delivered inside (original direction), from inside. Anything else is forged or misrouted.
  const bool from_inside = is_inside(p.key4.src_addr);
  if (match.direction == Direction::reply ? p.key4.dst_addr != own.external_addr || (from_inside && !hairpin) : !from_inside) {
    return counters_.drop(NfDrop::untranslatable);
  }
  // For a quoted ICMP query both endpoints name the one identifier: the destination is rewritten first
  // so that the quoted sender's identifier, the one the error's receiver knows, is the one left.
  if (match.direction == Direction::reply) {
    // About a packet `own` sent (translated): back to its inside host, quote restored; for a hairpin, from
    // the peer's external address, the quote's destination as `own` addressed it.
    if (hairpin) {
      const NatMapping& peer = mappings_[s.hairpin_mapping];
      rewrite_ipv4_src(packet.frame, p, peer.external_addr);
      rewrite_quoted_endpoint(packet.frame, p, QuotedEndpoint::destination, peer.external_addr, peer.external_port);
    }
    rewrite_ipv4_dst(packet.frame, p, own.inside_addr);
    rewrite_quoted_endpoint(packet.frame, p, QuotedEndpoint::source, own.inside_addr, own.inside_port);
  } else {
    // About a packet delivered to `own`'s inside host: from its external endpoint, quote translated; for
    // a hairpin, to the peer's inside host, the quote's source as the peer sent it.
    rewrite_ipv4_src(packet.frame, p, own.external_addr);
    rewrite_quoted_endpoint(packet.frame, p, QuotedEndpoint::destination, own.external_addr, own.external_port);
    if (hairpin) {
      const NatMapping& peer = mappings_[s.hairpin_mapping];
      rewrite_ipv4_dst(packet.frame, p, peer.inside_addr);
      rewrite_quoted_endpoint(packet.frame, p, QuotedEndpoint::source, peer.inside_addr, peer.inside_port);
    }
  }
  return Verdict::forward;  // no session timer is touched: errors neither refresh nor end a mapping
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::size_t Nat44<Table, Aging, Events>::expire(Nanos now, std::size_t budget) {
  const std::size_t n = sessions_.expire(now, budget, [&](ConnId, const auto& connection) {
    const NatSession& s = connection.payload;
    if constexpr (Events::kEnabled) {
      NatEvent closed{NatEvent::Kind::session_closed, {}, {}, {}};
      closed.connection.original = connection.original;
      closed.connection.protocol = connection.protocol;
      events_.emit(closed);
    }
    if (config_.filtering == NatFiltering::address_dependent) {
      const std::uint64_t remote = remote_key(s.mapping, connection.reply.src_addr);
      if (auto it = remotes_.find(remote); it != remotes_.end() && --it->second == 0) remotes_.erase(it);
    }
    for (const std::uint32_t id : {s.mapping, s.hairpin_mapping}) {
      if (id == kNone) continue;
      --mappings_[id].sessions;
      drop_mapping_if_unused(id, now);
    }
  });
  counters_.connections_expired += n;
  counters_.drops[static_cast<std::size_t>(NfDrop::fragment_timeout)] += held_.expire(now);
  return n;
}

namespace nat_snapshot_detail {

constexpr std::uint8_t kProtocolOfIndex[3] = {ipproto::kTcp, ipproto::kUdp, ipproto::kIcmp};

inline Nanos left(Nanos at, Nanos now) { return at > now ? at - now : 0; }

}  // namespace nat_snapshot_detail

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
NatSnapshot Nat44<Table, Aging, Events>::snapshot(Nanos now) const {
  using nat_snapshot_detail::left;
  NatSnapshot s;
  std::vector<std::uint32_t> index_of(mappings_.size(), NatSnapshot::kNoMapping);
  for (std::uint32_t id = 0; id < mappings_.size(); ++id) {
    if (!mapping_ids_.is_live(id)) continue;
    const NatMapping& m = mappings_[id];
    index_of[id] = static_cast<std::uint32_t>(s.mappings.size());
    s.mappings.push_back({m.inside_addr, m.external_addr, m.inside_port, m.external_port, m.protocol});
  }
  s.sessions.reserve(sessions_.size());
  sessions_.for_each([&](ConnId conn, const auto& connection) {
    const NatSession& payload = connection.payload;
    s.sessions.push_back({sessions_.save(conn, now), index_of[payload.mapping],
                          payload.hairpin_mapping == kNone ? NatSnapshot::kNoMapping : index_of[payload.hairpin_mapping]});
  });
  for (const ExternalPorts& ports : ports_) {
    if (const PortBlocks* blocks = ports.blocks()) {
      const std::uint32_t address = blocks->public_addr();
      blocks->for_each_held_block([&](std::uint32_t owner, std::uint16_t first, std::uint16_t) {
        s.blocks.push_back({owner, address, first});
      });
      blocks->for_each_quarantined_block([&](std::uint16_t first, Nanos free_at) {
        s.quarantined_blocks.push_back({address, first, left(free_at, now)});
      });
      blocks->for_each_quarantined_port([&](unsigned p, std::uint16_t port, Nanos free_at) {
        s.quarantined_ports.push_back({address, port, nat_snapshot_detail::kProtocolOfIndex[p], left(free_at, now)});
      });
    } else {
      const std::uint32_t address = config_.pool[static_cast<std::size_t>(&ports - ports_.data())];
      for (const std::uint8_t protocol : nat_snapshot_detail::kProtocolOfIndex) {
        ports.allocator(protocol).for_each_quarantined([&](std::uint16_t port, Nanos free_at) {
          s.quarantined_ports.push_back({address, port, protocol, left(free_at, now)});
        });
      }
    }
  }
  return s;
}

template <FlowTable Table, AgingPolicy Aging, NatEventSink Events>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::size_t Nat44<Table, Aging, Events>::restore(const NatSnapshot& s, Nanos now, RestoreMode mode) {
  if (mapping_count() != 0 || sessions_.size() != 0) throw std::invalid_argument("nat state: restored into an instance that is not fresh");
  std::size_t skipped = 0;
  // A record that does not fit: the whole snapshot refused, or the record left out.
  const auto misfit = [&](const std::string& what) {
    if (mode == RestoreMode::whole) throw std::invalid_argument("nat state: " + what);
    ++skipped;
  };
  // The pool index of a public address, kNotInPool (a misfit) if none.
  const auto pool_at = [&](std::uint32_t address) {
    const std::size_t pool = pool_index(address);
    if (pool == kNotInPool) misfit(fmt::format("{} is not in the pool", ipv4_to_string(address)));
    return pool;
  };
  const auto blocks_at = [&](std::uint32_t address) -> PortBlocks* {
    const std::size_t pool = pool_at(address);
    if (pool == kNotInPool) return nullptr;
    PortBlocks* blocks = ports_of(pool).blocks();
    if (blocks == nullptr) misfit("port blocks, but this NAT gives its ports one by one");
    return blocks;
  };
  for (const NatSnapshot::Block& b : s.blocks) {
    PortBlocks* blocks = blocks_at(b.public_addr);
    if (blocks != nullptr && !blocks->restore_block(b.subscriber, b.first_port)) {
      misfit(fmt::format("the block at {}:{} is not a free block of this worker", ipv4_to_string(b.public_addr), b.first_port));
    }
  }
  std::vector<std::uint32_t> ids(s.mappings.size(), kNone);
  for (std::size_t i = 0; i < s.mappings.size(); ++i) {
    const NatSnapshot::Mapping& m = s.mappings[i];
    // Formatted only for a misfit: a million mappings restore without building a string each.
    const auto name = [&m] {
      return fmt::format("mapping {}:{} -> {}:{}", ipv4_to_string(m.inside_addr), to_host16(m.inside_port),
                         ipv4_to_string(m.external_addr), to_host16(m.external_port));
    };
    const std::size_t pool = pool_at(m.external_addr);
    if (pool == kNotInPool) continue;
    if (!is_inside(m.inside_addr) || pool_of(m.inside_addr) != pool) {
      misfit(name() + ": not this NAT's pairing of the inside address");
      continue;
    }
    const std::uint64_t endpoint = endpoint_key(m.inside_addr, m.inside_port, m.protocol);
    if (by_inside_.contains(endpoint)) {
      misfit(name() + ": twice");
      continue;
    }
    const FlowId id = mapping_ids_.allocate();
    if (id == kNoFlow) {
      misfit("more mappings than max_mappings");
      continue;
    }
    PortBlocks* blocks = ports_of(pool).blocks();
    const bool claimed = blocks != nullptr
                             ? blocks->restore_in_use(m.inside_addr, port_protocol_index(m.protocol), to_host16(m.external_port), id)
                             : ports_of(pool).allocator(m.protocol).restore_in_use(to_host16(m.external_port), id);
    if (!claimed) {
      mapping_ids_.release(id);
      misfit(name() + ": its port is not free in this worker's slice" + (blocks ? " and the subscriber's blocks" : ""));
      continue;
    }
    by_inside_.emplace(endpoint, id);
    mappings_[id] = {m.inside_addr, m.external_addr, m.inside_port, m.external_port, m.protocol, 0};
    if (config_.port_quota != 0) ++subscriber_mappings_[endpoint_key(m.inside_addr, 0, m.protocol)];
    ids[i] = id;
  }
  for (const NatSnapshot::QuarantinedPort& q : s.quarantined_ports) {
    const std::size_t pool = pool_at(q.public_addr);
    if (pool == kNotInPool) continue;
    PortBlocks* blocks = ports_of(pool).blocks();
    const bool kept = blocks != nullptr ? blocks->restore_quarantined_port(port_protocol_index(q.protocol), q.port, now + q.remaining)
                                        : ports_of(pool).allocator(q.protocol).restore_quarantined(q.port, now + q.remaining);
    if (!kept) misfit(fmt::format("quarantined port {}:{}: not free, not in the slice, or out of order", ipv4_to_string(q.public_addr), q.port));
  }
  for (const NatSnapshot::QuarantinedBlock& q : s.quarantined_blocks) {
    PortBlocks* blocks = blocks_at(q.public_addr);
    if (blocks != nullptr && !blocks->restore_quarantined_block(q.first_port, now + q.remaining)) {
      misfit(fmt::format("quarantined block {}:{}: not a free block, or out of order", ipv4_to_string(q.public_addr), q.first_port));
    }
  }
  const auto restored_mapping = [&](std::uint32_t index) { return index < ids.size() ? ids[index] : kNone; };
  for (const NatSnapshot::Session& session : s.sessions) {
    const SavedConnection<FlowKeyV4>& c = session.connection;
    const bool hairpin = session.hairpin_mapping != NatSnapshot::kNoMapping;
    const std::uint32_t own = restored_mapping(session.mapping);
    const std::uint32_t peer = hairpin ? restored_mapping(session.hairpin_mapping) : kNone;
    if (own == kNone || (hairpin && peer == kNone)) {
      misfit("a session names no mapping");
      continue;
    }
    const NatMapping& m = mappings_[own];
    if (c.protocol != m.protocol || c.original.protocol != m.protocol || c.reply.protocol != m.protocol ||
        c.original.src_addr != m.inside_addr || c.reply.dst_addr != m.external_addr) {
      misfit("a session that does not go through its mapping");
      continue;
    }
    const CreateResult created = sessions_.restore(c, flow_hash(c.original), flow_hash(c.reply), now);
    if (created.status != CreateStatus::created) {
      misfit(created.status == CreateStatus::full ? "more sessions than max_sessions" : "a session's tuple twice");
      continue;
    }
    sessions_.payload(created.match.conn) = {own, peer, now};
    ++mappings_[own].sessions;
    if (peer != kNone) ++mappings_[peer].sessions;
    if (config_.filtering == NatFiltering::address_dependent) ++remotes_[remote_key(own, c.reply.src_addr)];
  }
  for (const std::uint32_t id : ids) {
    if (id == kNone || mappings_[id].sessions != 0) continue;
    misfit("a mapping without sessions");
    drop_mapping_if_unused(id, now);  // what fits: the mapping goes, its port back as a freed one
  }
  for (ExternalPorts& ports : ports_) {
    if (PortBlocks* blocks = ports.blocks(); blocks != nullptr && blocks->give_back_unused(now) != 0) misfit("a block without ports in use");
  }
  return skipped;
}

}  // namespace flowtrack
