#include "flowtrack/nf/lb_consistency.hpp"

namespace flowtrack {

ConsistencyLedger::ConsistencyLedger(const std::vector<Service>& services, LinkType link, Nanos handshake_timeout)
    : services_(services), link_(link), handshake_timeout_(handshake_timeout) {
  for (std::uint32_t s = 0; s < services.size(); ++s) {
    const ServiceConfig& c = services[s].config();
    service_index_.emplace(endpoint_key(c.vip, c.port, c.protocol), s);
  }
}

std::uint32_t ConsistencyLedger::service_at(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const {
  const auto it = service_index_.find(endpoint_key(address, port, protocol));
  return it == service_index_.end() ? kNoService : it->second;
}

std::uint32_t ConsistencyLedger::backend_at(std::uint32_t service, std::uint32_t address, std::uint16_t port) const {
  const Service& s = services_[service];
  const std::vector<Backend>& pool = s.backends();
  for (std::uint32_t b = 0; b < pool.size(); ++b) {
    const std::uint16_t backend_port = pool[b].config.port != 0 ? pool[b].config.port : s.config().port;
    if (pool[b].config.address == address && backend_port == port) return b;
  }
  return static_cast<std::uint32_t>(pool.size());
}

void ConsistencyLedger::forwarded(const ParsedPacket& in, std::span<const std::uint8_t> out_frame, Nanos now) {
  if (in.ip_version != 4 || !in.has_ports || in.icmp_is_error) return;
  ParsedPacket out;
  if (parse_frame(out_frame, link_, out) != ParseStatus::ok || out.ip_version != 4) return;
  const FlowKeyV4& key = in.key4;
  // An answer: the client's connection has been answered.
  if (const std::uint32_t s = service_at(out.key4.src_addr, out.key4.src_port, key.protocol); s != kNoService) {
    const auto it = connections_.find(connection_key(s, out.key4.dst_addr, out.key4.dst_port));
    if (it != connections_.end()) it->second.unanswered_syn = false;
    return;
  }
  const std::uint32_t service = service_at(key.dst_addr, key.dst_port, key.protocol);
  if (service == kNoService) return;
  const std::uint32_t backend = backend_at(service, out.key4.dst_addr, out.key4.dst_port);
  const bool tcp = key.protocol == ipproto::kTcp;
  const bool opening = !tcp || (in.tcp_flags & (tcpflag::kSyn | tcpflag::kAck)) == tcpflag::kSyn;
  const bool syn = opening && tcp;
  auto [it, first] = connections_.try_emplace(connection_key(service, key.src_addr, key.src_port), Connection{backend, now, syn});
  // A SYN is resent while the connection it opened is unanswered, for the handshake timeout at most; any
  // other SYN opens the endpoints' next connection (in a synchronized one a SYN changes nothing: RFC
  // 9293, 3.10.7.4).
  if (!first && syn && !(it->second.unanswered_syn && now - it->second.syn_at < handshake_timeout_)) {
    it->second = {backend, now, true};
    first = true;
  }
  const std::vector<Backend>& pool = services_[service].backends();
  if (!first && it->second.backend != backend) ++counts_.violations;
  if (backend >= pool.size() || (first && opening && !pool[backend].takes_new())) ++counts_.false_hits;
}

}  // namespace flowtrack
