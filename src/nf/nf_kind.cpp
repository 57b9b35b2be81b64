#include "flowtrack/nf/nf_kind.hpp"

namespace flowtrack {

std::string_view nf_kind_name(NfKind kind) {
  switch (kind) {
    case NfKind::fwd: return "fwd";
    case NfKind::slb: return "slb";
    case NfKind::lb: return "lb";
    case NfKind::nat: return "nat";
    case NfKind::concury: return "concury";
  }
  return "unknown";
}

std::optional<NfKind> nf_kind_from_name(std::string_view name) {
  for (const NfKind kind : kAllNfKinds) {
    if (nf_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

}  // namespace flowtrack
