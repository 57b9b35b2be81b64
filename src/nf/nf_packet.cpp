#include "flowtrack/nf/nf_packet.hpp"

#include "flowtrack/nf/network_function.hpp"

namespace flowtrack {

std::string_view nf_drop_name(NfDrop drop) {
  switch (drop) {
    case NfDrop::no_backend: return "no_backend";
    case NfDrop::table_full: return "table_full";
    case NfDrop::tuple_conflict: return "tuple_conflict";
    case NfDrop::non_syn_first: return "non_syn_first";
    case NfDrop::no_port: return "no_port";
    case NfDrop::port_quota: return "port_quota";
    case NfDrop::fragment_full: return "fragment_full";
    case NfDrop::fragment_timeout: return "fragment_timeout";
    case NfDrop::no_mapping: return "no_mapping";
    case NfDrop::filtered: return "filtered";
    case NfDrop::untranslatable: return "untranslatable";
    case NfDrop::log_full: return "log_full";
    case NfDrop::not_to_pool: return "not_to_pool";
    case NfDrop::spoofed_source: return "spoofed_source";
    case NfDrop::not_to_service: return "not_to_service";
    case NfDrop::too_big: return "too_big";
    case NfDrop::no_room: return "no_room";
    case NfDrop::not_ipv4: return "not_ipv4";
    case NfDrop::count_: break;
  }
  return "unknown";
}

NfCounters& NfCounters::operator+=(const NfCounters& other) {
  forwarded += other.forwarded;
  rewritten += other.rewritten;
  passed += other.passed;
  connections_created += other.connections_created;
  connections_expired += other.connections_expired;
  for (std::size_t d = 0; d < drops.size(); ++d) drops[d] += other.drops[d];
  return *this;
}

std::string_view nf_stage_name(NfStage stage) {
  switch (stage) {
    case NfStage::parse: return "parse";
    case NfStage::lookup: return "lookup";
    case NfStage::state: return "state";
    case NfStage::rewrite: return "rewrite";
    case NfStage::aging: return "aging";
    case NfStage::count_: break;
  }
  return "unknown";
}

}  // namespace flowtrack
