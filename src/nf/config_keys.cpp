#include "flowtrack/nf/config_keys.hpp"

#include <stdexcept>
#include <string>

#include "flowtrack/conntrack/tcp_state.hpp"

namespace flowtrack {
namespace {

// [timeouts]: one key per TCP state (tcp_<state>), then the other protocols'.
std::vector<std::string> timeout_keys() {
  std::vector<std::string> keys;
  for (std::size_t s = 0; s < kTcpStateCount; ++s) {
    keys.push_back("tcp_" + std::string(tcp_state_name(static_cast<TcpState>(s))));
  }
  for (const char* key : {"udp_unreplied", "udp_replied", "icmp", "other"}) keys.emplace_back(key);
  return keys;
}

}  // namespace

const std::vector<ConfigTable>& config_tables() {
  static const std::vector<ConfigTable> tables = {
      {"", {"lb", "slb", "nat", "timeouts", "service", "change", "dataplane"}},
      {"lb",
       {"policy", "max_connections", "stateless_when_full", "non_syn_first", "maglev_size", "seed", "new_connection_rate",
        "new_connection_burst", "deployment_key"}},
      {"slb", {"selection", "maglev_size"}},
      {"nat",
       {"inside", "pool", "ports", "filtering", "quarantine", "max_sessions", "max_mappings", "port_quota",
        "icmp_on_exhaustion", "fragment_datagrams", "fragments_held", "fragment_timeout", "seed", "below_rfc_minimums",
        "block_size", "block_log", "block_log_syslog"}},
      {"timeouts", timeout_keys()},
      {"service", {"name", "vip", "port", "protocol", "backend", "forward", "tunnel_source", "mtu", "gue_port", "health"}},
      {"service.health",
       {"probe", "port", "path", "status", "body", "interval", "timeout", "rise", "fall", "jitter", "all_down"}},
      {"service.backend", {"name", "address", "port", "weight"}},
      {"change", {"at", "service", "backend", "action", "weight", "address", "port"}},
      {"dataplane", {"stats_interval", "port", "neighbor", "control_socket", "control_group", "metrics", "rx_queues", "mbufs", "mbuf_size",
                     "pair", "announce", "peers"}},
      {"dataplane.announce", {"file", "command", "linger_ms"}},
      {"dataplane.port", {"device", "address", "gateway", "role"}},
      {"dataplane.neighbor", {"address", "mac"}},
      {"dataplane.pair", {"role", "local", "peer", "key_file", "dead_interval_ms", "sync"}},
      {"dataplane.peers", {"local", "peers", "key_file", "dead_interval_ms", "max_exceptions"}},
  };
  return tables;
}

const std::vector<std::string>& config_keys(std::string_view name) {
  for (const ConfigTable& table : config_tables()) {
    if (table.name == name) return table.keys;
  }
  throw std::out_of_range("no configuration table '" + std::string(name) + "'");
}

}  // namespace flowtrack
