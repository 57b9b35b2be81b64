// Nat44's member functions (the class and its contract are in nat44.hpp).
#pragma once

#include <stdexcept>

namespace flowtrack {

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Nat44<Table, Aging>::Nat44(const NatConfig& config, unsigned core, unsigned cores, Nanos start)
    : config_(config),
      inside_mask_(config.inside_prefix_length == 0 ? 0 : ~std::uint32_t{0} << (32 - config.inside_prefix_length)),
      sessions_(config.max_sessions, config.timeouts, {.tick = 100 * kNanosPerMilli, .levels = 4, .start = start}),
      mappings_(config.max_mappings),
      mapping_ids_(config.max_mappings) {
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
  by_external_.reserve(config.max_mappings);
  remotes_.reserve(config.filtering == NatFiltering::address_dependent ? config.max_sessions : 0);
  for (std::size_t p = 0; p < config.pool.size(); ++p) {
    for (unsigned protocol = 0; protocol < 3; ++protocol) {
      allocators_.emplace_back(slice_first_, slice_last_, config.port_quarantine, config.seed * 977 + p * 3 + protocol + core * 7919);
    }
  }
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::size_t Nat44<Table, Aging>::pool_index(std::uint32_t addr) const {
  for (std::size_t i = 0; i < config_.pool.size(); ++i) {
    if (config_.pool[i] == addr) return i;
  }
  return kNotInPool;
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
const NatMapping* Nat44<Table, Aging>::mapping_of(std::uint32_t inside_addr, std::uint16_t inside_port, std::uint8_t protocol) const {
  const auto it = by_inside_.find(endpoint(inside_addr, inside_port, protocol));
  return it == by_inside_.end() ? nullptr : &mappings_[it->second];
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging>::process(NfPacket& packet, Nanos now) {
  const ParsedPacket& p = packet.parsed;
  if (p.ip_version != 4) {
    ++counters_.passed;
    ++counters_.forwarded;
    return Verdict::forward;
  }
  const FlowKeyV4& key = p.key4;
  const bool out = is_inside(key.src_addr) && !is_inside(key.dst_addr);
  const bool in = !out && is_public(key.dst_addr);
  if (!out && !in) {
    ++counters_.passed;
    ++counters_.forwarded;
    return Verdict::forward;
  }
  if (p.icmp_is_error) return icmp_error(packet);
  if (p.is_fragment || !p.has_ports) return counters_.drop(NfDrop::untranslatable);
  return out ? outbound(packet, key, now) : inbound(packet, key, now);
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::uint32_t Nat44<Table, Aging>::find_or_create_mapping(const FlowKeyV4& key, Nanos now) {
  const std::uint64_t inside = endpoint(key.src_addr, key.src_port, key.protocol);
  if (const auto it = by_inside_.find(inside); it != by_inside_.end()) return it->second;
  const FlowId id = mapping_ids_.allocate();
  if (id == kNoFlow) return kNone;
  // Paired pooling: the inside address alone picks the public address.
  const std::size_t pool = flow_hash(FlowKeyV4{.src_addr = key.src_addr}) % config_.pool.size();
  const std::uint16_t port = ports_of(pool, key.protocol).allocate(to_host16(key.src_port), now);
  if (port == 0) {
    mapping_ids_.release(id);
    return kNone;
  }
  mappings_[id] = {key.src_addr, config_.pool[pool], key.src_port, to_network16(port), key.protocol, 0};
  by_inside_.emplace(inside, id);
  by_external_.emplace(endpoint(config_.pool[pool], to_network16(port), key.protocol), id);
  return id;
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging>::drop_mapping_if_unused(std::uint32_t id, Nanos now) {
  NatMapping& m = mappings_[id];
  if (m.sessions != 0) return;
  by_inside_.erase(endpoint(m.inside_addr, m.inside_port, m.protocol));
  by_external_.erase(endpoint(m.external_addr, m.external_port, m.protocol));
  ports_of(pool_index(m.external_addr), m.protocol).release(to_host16(m.external_port), now);
  mapping_ids_.release(id);
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging>::set_source(NfPacket& packet, std::uint32_t addr, std::uint16_t port) {
  rewrite_ipv4_src(packet.frame, packet.parsed, addr);
  if (packet.parsed.icmp_is_query) rewrite_icmp_identifier(packet.frame, packet.parsed, port);
  else rewrite_src_port(packet.frame, packet.parsed, port);
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging>::set_destination(NfPacket& packet, std::uint32_t addr, std::uint16_t port) {
  rewrite_ipv4_dst(packet.frame, packet.parsed, addr);
  if (packet.parsed.icmp_is_query) rewrite_icmp_identifier(packet.frame, packet.parsed, port);
  else rewrite_dst_port(packet.frame, packet.parsed, port);
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
void Nat44<Table, Aging>::translate(NfPacket& packet, const NatSession& s, Direction direction) {
  const NatMapping& own = mappings_[s.mapping];
  if (direction == Direction::original) {
    set_source(packet, own.external_addr, own.external_port);
    if (s.hairpin_mapping != kNone) {
      const NatMapping& peer = mappings_[s.hairpin_mapping];
      set_destination(packet, peer.inside_addr, peer.inside_port);
    }
  } else {
    if (s.hairpin_mapping != kNone) {
      const NatMapping& peer = mappings_[s.hairpin_mapping];
      set_source(packet, peer.external_addr, peer.external_port);
    }
    set_destination(packet, own.inside_addr, own.inside_port);
  }
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging>::outbound(NfPacket& packet, const FlowKeyV4& key, Nanos now) {
  const std::uint32_t hash = flow_hash(key);
  ConnMatch match = sessions_.find(key, hash);
  if (!match) {
    // Hairpinning: the destination is a public endpoint of this NAT; the session leads to its inside host.
    std::uint32_t peer = kNone;
    if (is_public(key.dst_addr)) {
      const auto it = by_external_.find(endpoint(key.dst_addr, key.dst_port, key.protocol));
      if (it == by_external_.end()) return counters_.drop(NfDrop::no_mapping);
      peer = it->second;
    }
    const std::uint32_t id = find_or_create_mapping(key, now);
    if (id == kNone) return counters_.drop(NfDrop::no_port);
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
    if (packet.parsed.icmp_is_query) reply.src_port = m.external_port;  // one identifier for both ends
    const CreateResult created = sessions_.create(key, hash, reply, flow_hash(reply), key.protocol, now);
    if (created.status != CreateStatus::created) {
      drop_mapping_if_unused(id, now);
      return counters_.drop(created.status == CreateStatus::full ? NfDrop::table_full : NfDrop::tuple_conflict);
    }
    match = created.match;
    sessions_.payload(match.conn) = {id, peer};
    ++mappings_[id].sessions;
    if (peer != kNone) ++mappings_[peer].sessions;
    if (config_.filtering == NatFiltering::address_dependent) ++remotes_[(std::uint64_t{id} << 32) | reply.src_addr];
    ++counters_.connections_created;
  }
  translate(packet, sessions_.payload(match.conn), match.direction);
  sessions_.update(match, packet.parsed, packet.wire_length, now);
  return forward_rewritten();
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging>::inbound(NfPacket& packet, const FlowKeyV4& key, Nanos now) {
  const std::uint32_t hash = flow_hash(key);
  ConnMatch match = sessions_.find(key, hash);
  if (!match) {
    const auto it = by_external_.find(endpoint(key.dst_addr, key.dst_port, key.protocol));
    if (it == by_external_.end()) return counters_.drop(NfDrop::no_mapping);
    const std::uint32_t id = it->second;
    if (config_.filtering == NatFiltering::address_dependent &&
        !remotes_.contains((std::uint64_t{id} << 32) | key.src_addr)) {
      return counters_.drop(NfDrop::filtered);
    }
    const NatMapping& m = mappings_[id];
    FlowKeyV4 original = key;  // the session as if the inside host had opened it
    original.src_addr = m.inside_addr;
    original.src_port = m.inside_port;
    original.dst_addr = key.src_addr;
    original.dst_port = packet.parsed.icmp_is_query ? m.inside_port : key.src_port;
    const CreateResult created = sessions_.create(original, flow_hash(original), key, hash, key.protocol, now);
    if (created.status != CreateStatus::created) {
      return counters_.drop(created.status == CreateStatus::full ? NfDrop::table_full : NfDrop::tuple_conflict);
    }
    sessions_.payload(created.match.conn) = {id, kNone};
    ++mappings_[id].sessions;
    if (config_.filtering == NatFiltering::address_dependent) ++remotes_[(std::uint64_t{id} << 32) | key.src_addr];
    ++counters_.connections_created;
    match = {created.match.conn, Direction::reply};
  }
  translate(packet, sessions_.payload(match.conn), match.direction);
  sessions_.update(match, packet.parsed, packet.wire_length, now);
  return forward_rewritten();
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
Verdict Nat44<Table, Aging>::icmp_error(NfPacket& packet) {
  const ParsedPacket& p = packet.parsed;
  if (!p.has_embedded) return counters_.drop(NfDrop::untranslatable);
  // The quoted packet travelled the other way: its reversed tuple is the one this error's direction uses.
  const FlowKeyV4 quoted_reversed = p.embedded_key4.reversed();
  const ConnMatch match = sessions_.find(quoted_reversed, flow_hash(quoted_reversed));
  if (!match) return counters_.drop(NfDrop::untranslatable);
  const NatSession& s = sessions_.payload(match.conn);
  const NatMapping& own = mappings_[s.mapping];
  if (match.direction == Direction::reply) {
    // Inbound error about a packet we sent out translated: back to the inside host, quote restored.
    rewrite_ipv4_dst(packet.frame, p, own.inside_addr);
    rewrite_quoted_endpoint(packet.frame, p, QuotedEndpoint::source, own.inside_addr, own.inside_port);
  } else {
    // Outbound error about a packet we delivered inside: from the external endpoint, quote translated.
    rewrite_ipv4_src(packet.frame, p, own.external_addr);
    rewrite_quoted_endpoint(packet.frame, p, QuotedEndpoint::destination, own.external_addr, own.external_port);
  }
  return forward_rewritten();  // no session timer is touched: errors neither refresh nor end a mapping
}

template <FlowTable Table, AgingPolicy Aging>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
std::size_t Nat44<Table, Aging>::expire(Nanos now, std::size_t budget) {
  const std::size_t n = sessions_.expire(now, budget, [&](ConnId, const auto& connection) {
    const NatSession& s = connection.payload;
    if (config_.filtering == NatFiltering::address_dependent) {
      const std::uint64_t remote = (std::uint64_t{s.mapping} << 32) | connection.reply.src_addr;
      if (auto it = remotes_.find(remote); it != remotes_.end() && --it->second == 0) remotes_.erase(it);
    }
    for (const std::uint32_t id : {s.mapping, s.hairpin_mapping}) {
      if (id == kNone) continue;
      --mappings_[id].sessions;
      drop_mapping_if_unused(id, now);
    }
  });
  counters_.connections_expired += n;
  return n;
}

}  // namespace flowtrack
