#include "flowtrack/nf/nat44_config.hpp"

#include <algorithm>
#include <utility>

namespace flowtrack {

ConntrackTimeouts nat_timeouts() {
  ConntrackTimeouts t;
  constexpr Nanos kFourMinutes = 240 * kNanosPerSecond;
  for (Nanos& timeout : t.tcp) timeout = std::max(timeout, kFourMinutes);  // transitory states: 4 min
  t.tcp[static_cast<std::size_t>(TcpState::established)] = std::max<Nanos>(t.tcp_timeout(TcpState::established), 7440 * kNanosPerSecond);
  t.tcp[static_cast<std::size_t>(TcpState::close)] = kFourMinutes;  // RFC 7857: 4 min after a RST
  t.udp_unreplied = 120 * kNanosPerSecond;
  t.udp_replied = 300 * kNanosPerSecond;
  t.icmp = 60 * kNanosPerSecond;
  return t;
}

std::optional<NatTimeoutShortfall> nat_timeout_below_rfc_minimum(const ConntrackTimeouts& t) {
  const auto shortfall = [](std::string key, Nanos value, const char* requirement, const char* subject,
                            Nanos minimum) -> std::optional<NatTimeoutShortfall> {
    if (value >= minimum) return std::nullopt;
    return NatTimeoutShortfall{std::move(key), requirement, subject, minimum, value};
  };
  constexpr Nanos kUdpMinimum = 120 * kNanosPerSecond;
  constexpr Nanos kEstablishedMinimum = 7440 * kNanosPerSecond;
  constexpr Nanos kTransitoryMinimum = 240 * kNanosPerSecond;
  constexpr Nanos kIcmpQueryMinimum = 60 * kNanosPerSecond;
  for (const auto& [key, value] : {std::pair{"udp_unreplied", t.udp_unreplied}, std::pair{"udp_replied", t.udp_replied}}) {
    if (auto s = shortfall(key, value, "RFC 4787 REQ-5", "a UDP mapping", kUdpMinimum)) return s;
  }
  for (std::size_t state = 0; state < kTcpStateCount; ++state) {
    const bool established = static_cast<TcpState>(state) == TcpState::established;
    if (auto s = shortfall("tcp_" + std::string(tcp_state_name(static_cast<TcpState>(state))), t.tcp[state], "RFC 5382 REQ-5",
                           established ? "an established TCP session" : "a transitory TCP session",
                           established ? kEstablishedMinimum : kTransitoryMinimum)) {
      return s;
    }
  }
  return shortfall("icmp", t.icmp, "RFC 5508 REQ-1", "an ICMP query mapping", kIcmpQueryMinimum);
}

unsigned nat_owner_of_port(const NatConfig& config, unsigned cores, std::uint16_t port) {
  if (port < config.port_first || port > config.port_last || cores == 0) return 0;
  const unsigned slice = (static_cast<unsigned>(config.port_last) - config.port_first + 1) / cores;
  return std::min(cores - 1, (static_cast<unsigned>(port) - config.port_first) / slice);
}

}  // namespace flowtrack
