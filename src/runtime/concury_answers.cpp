#include "flowtrack/runtime/concury_answers.hpp"

namespace flowtrack {

Presented ConcuryAnswers::operator()(NfPacket& packet, const ConcuryLb& nf) {
  const ParsedPacket& p = packet.parsed;
  client_packet_.reset();
  if (p.ip_version != 4 || !p.has_ports || p.icmp_is_error) return Presented::as_captured;
  if (const std::uint32_t to = nf.service_of(p.key4.dst_addr, p.key4.dst_port, p.key4.protocol); to != ConcuryLb::kNoService) {
    client_packet_ = Connection{to, p.key4.src_addr, p.key4.src_port};  // where it goes is read once it has gone
    return Presented::as_captured;
  }
  const std::uint32_t service = nf.service_of(p.key4.src_addr, p.key4.src_port, p.key4.protocol);
  if (service == ConcuryLb::kNoService) return Presented::as_captured;
  const auto sent = sent_to_.find(Connection{service, p.key4.dst_addr, p.key4.dst_port});
  const std::uint16_t backend = sent != sent_to_.end() ? sent->second : nf.backend_for(service, p.key4.dst_addr, p.key4.dst_port);
  if (backend >= nf.services()[service].backends().size()) return Presented::as_captured;
  const BackendConfig& b = nf.services()[service].backends()[backend].config;
  rewrite_ipv4_src(packet.frame, p, b.address);
  if (b.port != 0) rewrite_src_port(packet.frame, p, b.port);
  return parse_frame(packet.frame, link_, packet.parsed) == ParseStatus::ok ? Presented::rewritten : Presented::unpresentable;
}

void ConcuryAnswers::processed(const NfPacket& packet, const ConcuryLb& nf) {
  if (!client_packet_) return;
  ParsedPacket out;
  if (parse_frame(packet.frame, link_, out) != ParseStatus::ok) return;
  const Service& service = nf.services()[client_packet_->service];
  const std::vector<Backend>& pool = service.backends();
  for (std::size_t b = 0; b < pool.size(); ++b) {
    const std::uint16_t port = pool[b].config.port != 0 ? pool[b].config.port : service.config().port;
    if (pool[b].config.address == out.key4.dst_addr && port == out.key4.dst_port) {
      sent_to_[*client_packet_] = static_cast<std::uint16_t>(b);
      return;
    }
  }
}

}  // namespace flowtrack
