#include "flowtrack/nf/stateless_lb.hpp"

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

StatelessLb::StatelessLb(const StatelessLbConfig& config) : selection_(config.selection) {
  for (const ServiceConfig& s : config.services) {
    services_.emplace_back(s, config.maglev_size);
    sent_.emplace_back(s.backends.size(), 0);
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

Verdict StatelessLb::process(NfPacket& packet, Nanos) {
  const ParsedPacket& p = packet.parsed;
  if (p.ip_version == 4 && p.has_ports) {
    const FlowKeyV4& key = p.key4;
    for (std::uint32_t s = 0; s < services_.size(); ++s) {
      Service& service = services_[s];
      const ServiceConfig& c = service.config();
      if (key.protocol != c.protocol) continue;
      if (key.dst_addr == c.vip && key.dst_port == c.port) {
        const std::uint32_t b = select(service, flow_hash(key));
        if (b == Service::kNoBackend) return counters_.drop(NfDrop::no_backend);
        const BackendConfig& backend = service.backends()[b].config;
        rewrite_ipv4_dst(packet.frame, p, backend.address);
        if (backend.port != 0) rewrite_dst_port(packet.frame, p, backend.port);
        if (b >= sent_[s].size()) sent_[s].resize(b + 1, 0);
        ++sent_[s][b];
        ++counters_.rewritten;
        ++counters_.forwarded;
        return Verdict::forward;
      }
      for (const Backend& b : service.backends()) {
        const std::uint16_t port = b.config.port != 0 ? b.config.port : c.port;
        if (key.src_addr == b.config.address && key.src_port == port) {
          rewrite_ipv4_src(packet.frame, p, c.vip);
          rewrite_src_port(packet.frame, p, c.port);
          ++counters_.rewritten;
          ++counters_.forwarded;
          return Verdict::forward;
        }
      }
    }
  }
  ++counters_.passed;
  ++counters_.forwarded;
  return Verdict::forward;
}

}  // namespace flowtrack
