#include "flowtrack/nf/port_role.hpp"

namespace flowtrack {

std::string_view port_role_name(PortRole role) {
  switch (role) {
    case PortRole::unknown: return "unknown";
    case PortRole::inside: return "inside";
    case PortRole::outside: return "outside";
    case PortRole::clients: return "clients";
    case PortRole::backends: return "backends";
  }
  return "unknown";
}

std::optional<PortRole> port_role_from_name(std::string_view name) {
  for (const PortRole role : {PortRole::inside, PortRole::outside, PortRole::clients, PortRole::backends}) {
    if (name == port_role_name(role)) return role;
  }
  return std::nullopt;
}

}  // namespace flowtrack
