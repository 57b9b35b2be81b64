// The network functions flowtrack offers, by kind: what the command line names and the engine's drivers
// switch on, so that a function a driver does not handle is a compile error (-Wswitch), not a wrong
// branch taken at run time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace flowtrack {

enum class NfKind : std::uint8_t {
  fwd,      // the forwarder (the baseline: parse, count, forward)
  slb,      // the stateless load balancer
  lb,       // the stateful load balancer
  nat,      // NAT44 (NAPT)
  concury,  // the Concury load balancer
};

inline constexpr std::array kAllNfKinds{NfKind::fwd, NfKind::slb, NfKind::lb, NfKind::nat, NfKind::concury};

std::string_view nf_kind_name(NfKind kind);
std::optional<NfKind> nf_kind_from_name(std::string_view name);

// The balancers that keep every connection on one backend (the stateful LB's configuration, its
// [[change]] schedule, the consistency check).
constexpr bool keeps_connections_on_backends(NfKind kind) { return kind == NfKind::lb || kind == NfKind::concury; }

}  // namespace flowtrack
