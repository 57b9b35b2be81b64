// Which side of a network function a live port faces ([[dataplane.port]] role, dataplane_config.hpp),
// and so which side a packet came from (NfPacket::arrival). The NAT's ports face the inside (its
// private network) and the outside; the stateful LB's face the clients and the backends. A packet
// replayed from a trace came through no port: its arrival is unknown, and a function then decides by
// its addresses alone (nat44.hpp and stateful_lb.hpp state both rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace flowtrack {

enum class PortRole : std::uint8_t { unknown, inside, outside, clients, backends };

// "inside", "outside", "clients", "backends" ("unknown" names no configurable role).
std::string_view port_role_name(PortRole role);
std::optional<PortRole> port_role_from_name(std::string_view name);

}  // namespace flowtrack
