#include "flowtrack/nf/stateless_lb.hpp"

#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

StatelessLb::StatelessLb(const StatelessLbConfig& config) : selection_(config.selection) {
  for (const ServiceConfig& s : config.services) {
    append_service(services_, s, config.maglev_size);
  }
  index_backends();
}

void StatelessLb::apply(const PoolChange& change) {
  apply_pool_change(change, services_);
  index_backends();
}

void StatelessLb::index_backends() {
  service_of_vip_.clear();
  service_of_backend_.clear();
  for (std::uint32_t s = 0; s < services_.size(); ++s) {
    const ServiceConfig& c = services_[s].config();
    service_of_vip_.add(c);
    if (c.tunnel.tunnels()) continue;  // its backends answer the clients directly, never through here
    for (std::uint32_t i = 0; i < services_[s].backends().size(); ++i) {
      const BackendConfig& b = services_[s].backends()[i].config;
      // The first service listing a backend endpoint answers for it (a backend shared by two services
      // on one port cannot be told apart without state).
      service_of_backend_.try_emplace(endpoint_key(b.address, b.port != 0 ? b.port : c.port, c.protocol), s, i);
    }
  }
}

std::uint32_t StatelessLb::select(Service& service, std::uint32_t hash) const {
  if (selection_ == StatelessSelection::maglev) return service.consistent_choice(hash);
  std::vector<std::uint32_t> live;
  for (std::uint32_t i = 0; i < service.backends().size(); ++i) {
    if (service.backends()[i].takes_new()) live.push_back(i);
  }
  return live.empty() ? Service::kNoBackend : live[hash % live.size()];
}

Verdict StatelessLb::balance(NfPacket& packet) {
  const ParsedPacket& p = packet.parsed;
  if (p.ip_version == 4 && p.has_ports) {
    const FlowKeyV4& key = p.key4;
    if (const std::uint32_t s = service_of_vip_.find(key.dst_addr, key.dst_port, key.protocol); s != ServiceIndex::kNone) {
      Service& service = services_[s];
      const std::uint32_t b = select(service, packet.hash);
      if (b == Service::kNoBackend) return counters_.drop(NfDrop::no_backend);
      if (reaches_backend(packet, service.config().tunnel)) service.backends()[b].count(Direction::original, packet.wire_length);
      const BackendConfig& backend = service.backends()[b].config;
      if (service.config().tunnel.tunnels()) return send_through_tunnel(packet, service.config().tunnel, backend.address, counters_);
      rewrite_ipv4_address_and_port(packet.frame, p, Endpoint::destination, backend.address, backend.port);
      return counters_.rewrite();
    }
    if (const auto it = service_of_backend_.find(endpoint_key(key.src_addr, key.src_port, key.protocol));
        it != service_of_backend_.end()) {
      const auto [s, b] = it->second;
      services_[s].backends()[b].count(Direction::reply, packet.wire_length);
      const ServiceConfig& c = services_[s].config();
      rewrite_ipv4_src(packet.frame, p, c.vip);
      rewrite_src_port(packet.frame, p, c.port);
      return counters_.rewrite();
    }
  }
  return counters_.pass();
}

}  // namespace flowtrack
