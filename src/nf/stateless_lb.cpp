#include "flowtrack/nf/stateless_lb.hpp"

#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

StatelessLb::StatelessLb(const StatelessLbConfig& config) : selection_(config.selection) {
  for (const ServiceConfig& s : config.services) {
    append_service(services_, s, config.maglev_size);
    sent_.emplace_back(s.backends.size(), 0);
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
    for (const Backend& b : services_[s].backends()) {
      // The first service listing a backend endpoint answers for it (a backend shared by two services
      // on one port cannot be told apart without state).
      service_of_backend_.try_emplace(endpoint_key(b.config.address, b.config.port != 0 ? b.config.port : c.port, c.protocol), s);
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
      const BackendConfig& backend = service.backends()[b].config;
      rewrite_ipv4_address_and_port(packet.frame, p, Endpoint::destination, backend.address, backend.port);
      if (b >= sent_[s].size()) sent_[s].resize(b + 1, 0);
      ++sent_[s][b];
      return counters_.rewrite();
    }
    if (const auto it = service_of_backend_.find(endpoint_key(key.src_addr, key.src_port, key.protocol));
        it != service_of_backend_.end()) {
      const ServiceConfig& c = services_[it->second].config();
      rewrite_ipv4_src(packet.frame, p, c.vip);
      rewrite_src_port(packet.frame, p, c.port);
      return counters_.rewrite();
    }
  }
  return counters_.pass();
}

}  // namespace flowtrack
