#include "flowtrack/nf/nf_packet.hpp"

namespace flowtrack {

std::string_view nf_drop_name(NfDrop drop) {
  switch (drop) {
    case NfDrop::no_backend: return "no_backend";
    case NfDrop::table_full: return "table_full";
    case NfDrop::tuple_conflict: return "tuple_conflict";
    case NfDrop::count_: break;
  }
  return "unknown";
}

}  // namespace flowtrack
