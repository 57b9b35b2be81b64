#include "flowtrack/runtime/live_counters.hpp"

#include <nlohmann/json.hpp>

namespace flowtrack {
namespace {

nlohmann::ordered_json traffic_json(const std::map<std::string, LbTraffic>& figures, const std::map<std::string, std::uint64_t>& rates) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, t] : figures) {
    const auto rate = rates.find(name);
    out[name] = {{"packets", t.packets},
                 {"bytes", t.bytes},
                 {"reply_packets", t.reply_packets},
                 {"reply_bytes", t.reply_bytes},
                 {"connections", t.connections},
                 {"connections_live", t.connections_live},
                 {"connections_per_second", rate == rates.end() ? 0 : rate->second}};
  }
  return out;
}

}  // namespace

LiveCounters& LiveCounters::operator+=(const LiveCounters& other) {
  if (nf.empty()) nf = other.nf;  // a sum started empty takes the workers' name
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
  over_rate += other.over_rate;
  for (const auto& [name, n] : other.backends) backends[name] += n;
  for (const auto& [name, phases] : other.backend_connections) {
    for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) backend_connections[name][p] += phases[p];
  }
  traffic += other.traffic;
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
  j["over_rate"] = s.over_rate;
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
  if (!s.traffic.vips.empty()) {
    j["vips"] = traffic_json(s.traffic.vips, s.vip_rate);
    j["backend_traffic"] = traffic_json(s.traffic.backends, s.backend_rate);
  }
  if (!s.pair.role.empty()) {
    nlohmann::ordered_json& pair = j["pair"];
    pair["role"] = s.pair.role;
    for (const auto& [name, n] : s.pair.counts()) pair[std::string(name)] = n;
    pair["refused"] = s.pair.refused;
  }
  if (!s.backend_health.empty()) {
    nlohmann::ordered_json health = nlohmann::ordered_json::object();
    for (const auto& [name, h] : s.backend_health) {
      health[name] = {{"state", h.up ? "up" : "down"}, {"probes", h.probes}, {"failures", h.failures}, {"transitions", h.transitions}};
    }
    j["backend_health"] = health;
    j["all_down_events"] = s.all_down_events;
  }
  return j.dump();
}

}  // namespace flowtrack
