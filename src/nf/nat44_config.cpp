#include "flowtrack/nf/nat44_config.hpp"

#include <algorithm>

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

unsigned nat_owner_of_port(const NatConfig& config, unsigned cores, std::uint16_t port) {
  if (port < config.port_first || port > config.port_last || cores == 0) return 0;
  const unsigned slice = (static_cast<unsigned>(config.port_last) - config.port_first + 1) / cores;
  return std::min(cores - 1, (static_cast<unsigned>(port) - config.port_first) / slice);
}

}  // namespace flowtrack
