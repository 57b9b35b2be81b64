#include "flowtrack/runtime/live_counters.hpp"

#include <nlohmann/json.hpp>

namespace flowtrack {

LiveCounters& LiveCounters::operator+=(const LiveCounters& other) {
  packets_in += other.packets_in;
  packets_to_function += other.packets_to_function;
  packets_out += other.packets_out;
  for (const auto& [reason, n] : other.drops) drops[reason] += n;
  connections += other.connections;
  connections_live += other.connections_live;
  arp_answered += other.arp_answered;
  arp_asked += other.arp_asked;
  handed_off += other.handed_off;
  handoff_backoffs += other.handoff_backoffs;
  for (const auto& [name, n] : other.backends) backends[name] += n;
  for (const auto& [name, phases] : other.backend_connections) {
    for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) backend_connections[name][p] += phases[p];
  }
  return *this;
}

std::string live_counters_json(const LiveCounters& s) {
  nlohmann::ordered_json j;
  j["nf"] = s.nf;
  j["packets_in"] = s.packets_in;
  j["packets_to_function"] = s.packets_to_function;
  j["packets_out"] = s.packets_out;
  j["drops"] = s.drops;
  j["connections"] = s.connections;
  j["connections_live"] = s.connections_live;
  j["arp_answered"] = s.arp_answered;
  j["arp_asked"] = s.arp_asked;
  j["handed_off"] = s.handed_off;
  j["handoff_backoffs"] = s.handoff_backoffs;
  if (!s.backends.empty()) {
    j["backends"] = s.backends;
    // Each backend's live connections by phase: {"b1": {"opening": 0, "established": 3, "closing": 12}}.
    nlohmann::ordered_json phases = nlohmann::ordered_json::object();
    for (const auto& [name, by_phase] : s.backend_connections) {
      for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) {
        phases[name][std::string(connection_phase_name(static_cast<ConnectionPhase>(p)))] = by_phase[p];
      }
    }
    j["backend_connections"] = phases;
  }
  return j.dump();
}

}  // namespace flowtrack
