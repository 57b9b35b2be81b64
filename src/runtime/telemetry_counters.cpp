#include "flowtrack/runtime/telemetry_counters.hpp"

#include <rte_telemetry.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace flowtrack {
namespace {

std::atomic<const CounterBoard*> telemetry_board{nullptr};

// Telemetry keys take letters, digits, '_' and '/' only.
std::string telemetry_key(const std::string& name) {
  std::string key = name;
  for (char& c : key) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '/') c = '_';
  }
  return key;
}

int telemetry_dictionary(rte_tel_data* info, const std::map<std::string, std::uint64_t>& values) {
  rte_tel_data_start_dict(info);
  for (const auto& [name, n] : values) rte_tel_data_add_dict_u64(info, telemetry_key(name).c_str(), n);
  return 0;
}

int counters_command(const char*, const char*, rte_tel_data* info) {
  const LiveCounters c = telemetry_board.load()->read();
  std::uint64_t drops = 0;
  for (const auto& [reason, n] : c.drops) drops += n;
  rte_tel_data_start_dict(info);
  rte_tel_data_add_dict_string(info, "nf", c.nf.c_str());
  rte_tel_data_add_dict_u64(info, "packets_in", c.packets_in);
  rte_tel_data_add_dict_u64(info, "packets_to_function", c.packets_to_function);
  rte_tel_data_add_dict_u64(info, "packets_out", c.packets_out);
  rte_tel_data_add_dict_u64(info, "drops", drops);
  rte_tel_data_add_dict_u64(info, "connections", c.connections);
  rte_tel_data_add_dict_u64(info, "connections_live", c.connections_live);
  rte_tel_data_add_dict_u64(info, "arp_answered", c.arp_answered);
  rte_tel_data_add_dict_u64(info, "arp_asked", c.arp_asked);
  rte_tel_data_add_dict_u64(info, "handed_off", c.handed_off);
  rte_tel_data_add_dict_u64(info, "handoff_backoffs", c.handoff_backoffs);
  rte_tel_data_add_dict_u64(info, "over_rate", c.over_rate);
  return 0;
}

int drops_command(const char*, const char*, rte_tel_data* info) { return telemetry_dictionary(info, telemetry_board.load()->read().drops); }

int backends_command(const char*, const char*, rte_tel_data* info) {
  return telemetry_dictionary(info, telemetry_board.load()->read().backends);
}

int backend_connections_command(const char*, const char*, rte_tel_data* info) {
  rte_tel_data_start_dict(info);
  for (const auto& [name, phases] : telemetry_board.load()->read().backend_connections) {
    rte_tel_data* by_phase = rte_tel_data_alloc();
    if (by_phase == nullptr) return -ENOMEM;
    rte_tel_data_start_dict(by_phase);
    for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) {
      rte_tel_data_add_dict_u64(by_phase, std::string(connection_phase_name(static_cast<ConnectionPhase>(p))).c_str(), phases[p]);
    }
    rte_tel_data_add_dict_container(info, telemetry_key(name).c_str(), by_phase, 0);  // it takes and frees by_phase
  }
  return 0;
}

int health_command(const char*, const char*, rte_tel_data* info) {
  rte_tel_data_start_dict(info);
  const LiveCounters c = telemetry_board.load()->read();
  for (const auto& [name, h] : c.backend_health) {
    rte_tel_data* target = rte_tel_data_alloc();
    if (target == nullptr) return -ENOMEM;
    rte_tel_data_start_dict(target);
    rte_tel_data_add_dict_string(target, "state", h.up ? "up" : "down");
    rte_tel_data_add_dict_u64(target, "probes", h.probes);
    rte_tel_data_add_dict_u64(target, "failures", h.failures);
    rte_tel_data_add_dict_u64(target, "transitions", h.transitions);
    rte_tel_data_add_dict_container(info, telemetry_key(name).c_str(), target, 0);  // it takes and frees target
  }
  return 0;
}

// Per VIP or per backend: each one's figures as a dictionary.
int traffic_command(rte_tel_data* info, const std::map<std::string, LbTraffic>& figures, const std::map<std::string, std::uint64_t>& rates) {
  rte_tel_data_start_dict(info);
  for (const auto& [name, t] : figures) {
    rte_tel_data* one = rte_tel_data_alloc();
    if (one == nullptr) return -ENOMEM;
    rte_tel_data_start_dict(one);
    const auto rate = rates.find(name);
    for (const auto& [key, value] : {std::pair<const char*, std::uint64_t>{"packets", t.packets},
                                     {"bytes", t.bytes},
                                     {"reply_packets", t.reply_packets},
                                     {"reply_bytes", t.reply_bytes},
                                     {"connections", t.connections},
                                     {"connections_live", t.connections_live},
                                     {"connections_per_second", rate == rates.end() ? 0 : rate->second}}) {
      rte_tel_data_add_dict_u64(one, key, value);
    }
    rte_tel_data_add_dict_container(info, telemetry_key(name).c_str(), one, 0);  // it takes and frees one
  }
  return 0;
}

int vips_command(const char*, const char*, rte_tel_data* info) {
  const LiveCounters c = telemetry_board.load()->read();
  return traffic_command(info, c.traffic.vips, c.vip_rate);
}

int backend_traffic_command(const char*, const char*, rte_tel_data* info) {
  const LiveCounters c = telemetry_board.load()->read();
  return traffic_command(info, c.traffic.backends, c.backend_rate);
}

int pair_command(const char*, const char*, rte_tel_data* info) {
  const LiveCounters::PairFigures p = telemetry_board.load()->read().pair;
  rte_tel_data_start_dict(info);
  if (p.role.empty()) return 0;
  rte_tel_data_add_dict_string(info, "role", p.role.c_str());
  for (const auto& [name, n] : p.counts()) rte_tel_data_add_dict_u64(info, std::string(name).c_str(), n);
  rte_tel_data* refused = rte_tel_data_alloc();
  if (refused == nullptr) return -ENOMEM;
  telemetry_dictionary(refused, p.refused);
  rte_tel_data_add_dict_container(info, "refused", refused, 0);  // it takes and frees refused
  return 0;
}

int all_down_command(const char*, const char*, rte_tel_data* info) {
  return telemetry_dictionary(info, telemetry_board.load()->read().all_down_events);
}

}  // namespace

void register_telemetry_counters(const CounterBoard& board) {
  const bool first = telemetry_board.exchange(&board) == nullptr;
  if (!first) return;
  struct Command {
    const char* name;
    telemetry_cb callback;
    const char* help;
  };
  for (const Command& c : {Command{"/flowtrack/counters", counters_command, "flowtrack: packets, drops, connections. No parameters"},
                           Command{"/flowtrack/drops", drops_command, "flowtrack: drops by reason. No parameters"},
                           Command{"/flowtrack/backends", backends_command, "flowtrack: connections per LB backend. No parameters"},
                           Command{"/flowtrack/backend_connections", backend_connections_command,
                                   "flowtrack: live connections per LB backend by phase. No parameters"},
                           Command{"/flowtrack/vips", vips_command, "flowtrack: traffic and connections per LB VIP. No parameters"},
                           Command{"/flowtrack/backend_traffic", backend_traffic_command,
                                   "flowtrack: traffic and connections per LB backend. No parameters"},
                           Command{"/flowtrack/health", health_command,
                                   "flowtrack: health check state and counts per LB backend. No parameters"},
                           Command{"/flowtrack/pair", pair_command,
                                   "flowtrack: a NAT pair's role and sync link counters. No parameters"},
                           Command{"/flowtrack/all_down", all_down_command,
                                   "flowtrack: times every backend of a service was down at once. No parameters"}}) {
    if (const int rc = rte_telemetry_register_cmd(c.name, c.callback, c.help); rc != 0) {
      throw std::runtime_error(fmt::format("telemetry: cannot register {}: error {}", c.name, rc));
    }
  }
}

}  // namespace flowtrack
