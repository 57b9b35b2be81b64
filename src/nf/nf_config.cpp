#include "flowtrack/nf/nf_config.hpp"

#include "flowtrack/nf/config_keys.hpp"
#include "flowtrack/nf/dataplane_config.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <toml.hpp>

namespace flowtrack {
namespace {

using Value = toml::value;

[[noreturn]] void fail(const Value& at, const std::string& key, const std::string& problem) {
  const toml::source_location loc = at.location();
  throw ConfigError(fmt::format("{}:{}: {}: {}", loc.file_name(), loc.line(), key, problem));
}

// The keys of `table`, the configuration table named `name`, must all be in config_keys(name).
// `where` names the table in errors.
void only_keys(const Value& table, const std::string& name, const std::string& where) {
  const std::vector<std::string>& allowed = config_keys(name);
  for (const auto& [key, value] : table.as_table()) {
    if (std::ranges::find(allowed, key) == allowed.end()) fail(value, where + "." + key, "unknown key");
  }
}

void only_keys(const Value& table, const std::string& name) { only_keys(table, name, name); }

const Value* find(const Value& table, const std::string& key) {
  const auto& t = table.as_table();
  const auto it = t.find(key);
  return it == t.end() ? nullptr : &it->second;
}

std::string string_at(const Value& table, const std::string& where, const std::string& key, const std::string& fallback,
                      bool required = false) {
  const Value* v = find(table, key);
  if (v == nullptr) {
    if (required) fail(table, where + "." + key, "missing");
    return fallback;
  }
  if (!v->is_string()) fail(*v, where + "." + key, "expected a string");
  return v->as_string().str;
}

std::int64_t integer_at(const Value& table, const std::string& where, const std::string& key, std::int64_t fallback,
                        std::int64_t low, std::int64_t high, bool required = false) {
  const Value* v = find(table, key);
  if (v == nullptr) {
    if (required) fail(table, where + "." + key, "missing");
    return fallback;
  }
  if (!v->is_integer() || v->as_integer() < low || v->as_integer() > high) {
    fail(*v, where + "." + key, fmt::format("expected an integer in {}..{}", low, high));
  }
  return v->as_integer();
}

bool bool_at(const Value& table, const std::string& where, const std::string& key, bool fallback) {
  const Value* v = find(table, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail(*v, where + "." + key, "expected true or false");
  return v->as_boolean();
}

std::uint32_t address_at(const Value& table, const std::string& where, const std::string& key) {
  const std::string text = string_at(table, where, key, "", true);
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) {
    fail(*find(table, key), where + "." + key, fmt::format("'{}' is not an IPv4 address", text));
  }
  return parsed.s_addr;  // network order, as flow keys hold addresses
}

// An address and prefix length, "10.0.0.0/16" (`example` in the error); the address in network order.
std::pair<std::uint32_t, std::uint8_t> prefix_at(const Value& table, const std::string& where, const std::string& key,
                                                 const std::string& example) {
  const std::string text = string_at(table, where, key, "", true);
  const auto slash = text.find('/');
  in_addr address{};
  int length = -1;
  if (slash != std::string::npos) {
    try {
      length = std::stoi(text.substr(slash + 1));
    } catch (const std::exception&) {
      length = -1;
    }
  }
  if (slash == std::string::npos || inet_pton(AF_INET, text.substr(0, slash).c_str(), &address) != 1 || length < 1 ||
      length > 32) {
    fail(*find(table, key), where + "." + key, fmt::format("'{}' is not a prefix such as \"{}\"", text, example));
  }
  return {address.s_addr, static_cast<std::uint8_t>(length)};
}

// A value that may be one item or an array of items, each read by `one`.
template <class T, class One>
std::vector<T> one_or_many(const Value& table, const std::string& where, const std::string& key, One&& one) {
  const Value* v = find(table, key);
  if (v == nullptr) fail(table, where + "." + key, "missing");
  std::vector<T> out;
  if (v->is_array()) {
    if (v->as_array().empty()) fail(*v, where + "." + key, "empty array");
    for (const Value& item : v->as_array()) out.push_back(one(item));
  } else {
    out.push_back(one(*v));
  }
  return out;
}

std::vector<std::uint32_t> addresses_at(const Value& table, const std::string& where, const std::string& key) {
  return one_or_many<std::uint32_t>(table, where, key, [&](const Value& item) {
    in_addr parsed{};
    if (!item.is_string() || inet_pton(AF_INET, item.as_string().str.c_str(), &parsed) != 1) {
      fail(item, where + "." + key, "expected an IPv4 address such as \"198.18.0.1\" (or an array of them)");
    }
    return static_cast<std::uint32_t>(parsed.s_addr);
  });
}

std::vector<std::uint16_t> ports_at(const Value& table, const std::string& where, const std::string& key) {
  return one_or_many<std::uint16_t>(table, where, key, [&](const Value& item) {
    if (!item.is_integer() || item.as_integer() < 1 || item.as_integer() > 65535) {
      fail(item, where + "." + key, "expected a port in 1..65535 (or an array of them)");
    }
    return to_network16(static_cast<std::uint16_t>(item.as_integer()));
  });
}

Value parse_file(const std::string& path) {
  try {
    return toml::parse(path);
  } catch (const toml::syntax_error& e) {
    throw ConfigError(fmt::format("{}: not valid TOML: {}", path, e.what()));
  } catch (const std::runtime_error& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
}

// maglev_size_key names the option that sets the table size, for the error when a service has more
// backends than the table can share evenly.
std::vector<ServiceConfig> services_of(const Value& root, std::uint32_t maglev_size, const std::string& maglev_size_key) {
  const Value* list = find(root, "service");
  if (list == nullptr) fail(root, "service", "missing: at least one [[service]] is needed");
  if (!list->is_array()) fail(*list, "service", "expected [[service]] tables");
  std::vector<ServiceConfig> services;
  for (const Value& s : list->as_array()) {
    if (!s.is_table()) fail(s, "service", "expected a table");
    only_keys(s, "service");
    ServiceConfig service;
    service.name = string_at(s, "service", "name", fmt::format("service-{}", services.size()));
    const std::string protocol = string_at(s, "service", "protocol", "tcp");
    if (protocol == "tcp") service.protocol = ipproto::kTcp;
    else if (protocol == "udp") service.protocol = ipproto::kUdp;
    else fail(*find(s, "protocol"), "service.protocol", "expected \"tcp\" or \"udp\"");
    const std::vector<std::uint32_t> vips = addresses_at(s, "service", "vip");
    const std::vector<std::uint16_t> ports = ports_at(s, "service", "port");
    const Value* backends = find(s, "backend");
    if (backends == nullptr || !backends->is_array() || backends->as_array().empty()) {
      fail(s, "service.backend", "missing: each service needs [[service.backend]] tables");
    }
    std::set<std::string> names;
    for (const Value& b : backends->as_array()) {
      if (!b.is_table()) fail(b, "service.backend", "expected a table");
      only_keys(b, "service.backend");
      BackendConfig backend;
      backend.name = string_at(b, "service.backend", "name", "", true);
      if (!names.insert(backend.name).second) fail(b, "service.backend.name", fmt::format("'{}' appears twice", backend.name));
      backend.address = address_at(b, "service.backend", "address");
      backend.port = to_network16(static_cast<std::uint16_t>(integer_at(b, "service.backend", "port", 0, 0, 65535)));
      backend.weight = static_cast<std::uint32_t>(integer_at(b, "service.backend", "weight", 1, 0, 1'000'000));
      service.backends.push_back(backend);
    }
    if (service.backends.size() > max_backends_for(maglev_size)) {
      fail(*backends, "service.backend",
           fmt::format("{} backends: Maglev needs a table of more than 100 entries per backend ({} = {} takes at most {})",
                       service.backends.size(), maglev_size_key, maglev_size, max_backends_for(maglev_size)));
    }
    // One service per (vip, port): both may be given as arrays, the service is then repeated.
    for (const std::uint32_t vip : vips) {
      for (const std::uint16_t port : ports) {
        service.vip = vip;
        service.port = port;
        services.push_back(service);
      }
    }
  }
  return services;
}

ConntrackTimeouts timeouts_of(const Value& root, ConntrackTimeouts t = {}) {
  const Value* table = find(root, "timeouts");
  if (table == nullptr) return t;
  if (!table->is_table()) fail(*table, "timeouts", "expected a table");
  only_keys(*table, "timeouts");
  constexpr std::int64_t kMaxSeconds = 10LL * 365 * 24 * 3600;
  auto seconds = [&](const std::string& key, Nanos fallback) {
    return static_cast<Nanos>(integer_at(*table, "timeouts", key, static_cast<std::int64_t>(fallback / kNanosPerSecond), 1,
                                         kMaxSeconds)) * kNanosPerSecond;
  };
  for (std::size_t s = 0; s < kTcpStateCount; ++s) {
    t.tcp[s] = seconds("tcp_" + std::string(tcp_state_name(static_cast<TcpState>(s))), t.tcp[s]);
  }
  t.udp_unreplied = seconds("udp_unreplied", t.udp_unreplied);
  t.udp_replied = seconds("udp_replied", t.udp_replied);
  t.icmp = seconds("icmp", t.icmp);
  t.other = seconds("other", t.other);
  return t;
}

// The [[change]] tables: the LB's schedule of pool changes (pool_schedule.hpp), checked against the
// services, sorted by time.
std::vector<PoolChange> changes_of(const Value& root, const std::vector<ServiceConfig>& services, std::uint32_t maglev_size) {
  const Value* list = find(root, "change");
  if (list == nullptr) return {};
  if (!list->is_array()) fail(*list, "change", "expected [[change]] tables");
  std::vector<std::pair<PoolChange, const Value*>> read;
  for (const Value& c : list->as_array()) {
    if (!c.is_table()) fail(c, "change", "expected a table");
    only_keys(c, "change");
    PoolChange change;
    const Value* at = find(c, "at");
    if (at == nullptr) fail(c, "change.at", "missing");
    const double seconds = at->is_integer() ? static_cast<double>(at->as_integer()) : at->is_floating() ? at->as_floating() : -1;
    constexpr double kMaxSeconds = 10.0 * 365 * 24 * 3600;
    if (!(seconds >= 0 && seconds <= kMaxSeconds)) fail(*at, "change.at", "expected seconds after the first packet, such as 2.5");
    change.at = static_cast<Nanos>(seconds * 1e9 + 0.5);
    change.service = string_at(c, "change", "service", "", true);
    change.backend.name = string_at(c, "change", "backend", "", true);
    const std::string action = string_at(c, "change", "action", "", true);
    const auto parsed = pool_action_from_name(action);
    if (!parsed) fail(*find(c, "action"), "change.action", "expected \"add\", \"remove\", \"drain\" or \"weight\"");
    change.action = *parsed;
    // Each action takes exactly the keys it uses: a weight on a removal is a mistake, not a no-op.
    const bool adds = change.action == PoolAction::add;
    const bool weighs = adds || change.action == PoolAction::weight;
    for (const char* key : {"address", "port"}) {
      if (!adds && find(c, key) != nullptr) fail(*find(c, key), fmt::format("change.{}", key), "only an \"add\" takes it");
    }
    if (!weighs && find(c, "weight") != nullptr) fail(*find(c, "weight"), "change.weight", "only \"add\" and \"weight\" take it");
    if (adds) {
      change.backend.address = address_at(c, "change", "address");
      change.backend.port = to_network16(static_cast<std::uint16_t>(integer_at(c, "change", "port", 0, 0, 65535)));
    }
    if (weighs) {
      change.backend.weight =
          static_cast<std::uint32_t>(integer_at(c, "change", "weight", 1, 0, 1'000'000, change.action == PoolAction::weight));
    }
    read.emplace_back(std::move(change), &c);
  }
  std::ranges::stable_sort(read, {}, [](const auto& r) { return r.first.at; });
  std::vector<PoolChange> changes;
  for (const auto& r : read) changes.push_back(r.first);
  if (const auto problem = check_pool_changes(changes, services, maglev_size)) {
    const Value& at = *read[problem->index].second;
    const Value* key = find(at, problem->key);
    fail(key != nullptr ? *key : at, "change." + problem->key, problem->problem);
  }
  return changes;
}

const Value* section(const Value& root, const std::string& name) {
  const Value* s = find(root, name);
  if (s != nullptr && !s->is_table()) fail(*s, name, "expected a table");
  return s;
}

void check_top_level(const Value& root) {
  if (!root.is_table()) throw ConfigError("the configuration is not a TOML table");
  only_keys(root, "", "(top level)");
}

}  // namespace

StatelessLbConfig load_stateless_lb_config(const std::string& path) {
  const Value root = parse_file(path);
  check_top_level(root);
  StatelessLbConfig config;
  if (const Value* slb = section(root, "slb")) {
    only_keys(*slb, "slb");
    const std::string selection = string_at(*slb, "slb", "selection", "maglev");
    if (selection == "maglev") config.selection = StatelessSelection::maglev;
    else if (selection == "modulo") config.selection = StatelessSelection::modulo;
    else fail(*find(*slb, "selection"), "slb.selection", "expected \"maglev\" or \"modulo\"");
    config.maglev_size = static_cast<std::uint32_t>(integer_at(*slb, "slb", "maglev_size", config.maglev_size, 3, 1 << 24));
    if (!is_prime(config.maglev_size)) fail(*find(*slb, "maglev_size"), "slb.maglev_size", "must be a prime");
  }
  if (const Value* change = find(root, "change")) fail(*change, "change", "only the stateful LB ([lb]) applies pool changes");
  config.services = services_of(root, config.maglev_size, "slb.maglev_size");
  return config;
}

StatefulLbConfig load_stateful_lb_config(const std::string& path) {
  const Value root = parse_file(path);
  check_top_level(root);
  StatefulLbConfig config;
  if (const Value* lb = section(root, "lb")) {
    only_keys(*lb, "lb");
    const std::string policy = string_at(*lb, "lb", "policy", "maglev");
    const auto parsed = lb_policy_from_name(policy);
    if (!parsed) fail(*find(*lb, "policy"), "lb.policy", "expected round_robin, weighted_random, maglev or least_connections");
    config.policy = *parsed;
    config.max_connections = static_cast<std::size_t>(integer_at(*lb, "lb", "max_connections", 1 << 20, 1, 1LL << 28));
    config.stateless_when_full = bool_at(*lb, "lb", "stateless_when_full", false);
    const std::string non_syn_first = string_at(*lb, "lb", "non_syn_first", "consistent");
    if (non_syn_first == "consistent") config.non_syn_first = NonSynFirst::consistent;
    else if (non_syn_first == "policy") config.non_syn_first = NonSynFirst::policy;
    else if (non_syn_first == "drop") config.non_syn_first = NonSynFirst::drop;
    else fail(*find(*lb, "non_syn_first"), "lb.non_syn_first", "expected \"consistent\", \"policy\" or \"drop\"");
    config.maglev_size = static_cast<std::uint32_t>(integer_at(*lb, "lb", "maglev_size", config.maglev_size, 3, 1 << 24));
    if (!is_prime(config.maglev_size)) fail(*find(*lb, "maglev_size"), "lb.maglev_size", "must be a prime");
    config.seed = static_cast<std::uint64_t>(integer_at(*lb, "lb", "seed", 1, 0, INT64_MAX));
  }
  config.timeouts = timeouts_of(root);
  config.services = services_of(root, config.maglev_size, "lb.maglev_size");
  config.changes = changes_of(root, config.services, config.maglev_size);
  return config;
}

NatConfig load_nat_config(const std::string& path) {
  const Value root = parse_file(path);
  check_top_level(root);
  NatConfig config;
  const Value* nat = section(root, "nat");
  if (nat == nullptr) fail(root, "nat", "missing: a [nat] table is needed");
  only_keys(*nat, "nat");
  std::tie(config.inside_network, config.inside_prefix_length) = prefix_at(*nat, "nat", "inside", "10.0.0.0/16");
  config.pool = addresses_at(*nat, "nat", "pool");
  if (const Value* ports = find(*nat, "ports")) {
    if (!ports->is_array() || ports->as_array().size() != 2 || !ports->as_array()[0].is_integer() ||
        !ports->as_array()[1].is_integer()) {
      fail(*ports, "nat.ports", "expected [first, last]");
    }
    const auto first = ports->as_array()[0].as_integer();
    const auto last = ports->as_array()[1].as_integer();
    if (first < 1 || last > 65535 || first > last) fail(*ports, "nat.ports", "expected 1 <= first <= last <= 65535");
    config.port_first = static_cast<std::uint16_t>(first);
    config.port_last = static_cast<std::uint16_t>(last);
  }
  const std::string filtering = string_at(*nat, "nat", "filtering", "endpoint_independent");
  if (filtering == "endpoint_independent") config.filtering = NatFiltering::endpoint_independent;
  else if (filtering == "address_dependent") config.filtering = NatFiltering::address_dependent;
  else fail(*find(*nat, "filtering"), "nat.filtering", "expected \"endpoint_independent\" or \"address_dependent\"");
  config.port_quarantine =
      static_cast<Nanos>(integer_at(*nat, "nat", "quarantine", 120, 0, 86400)) * kNanosPerSecond;
  config.max_sessions = static_cast<std::size_t>(integer_at(*nat, "nat", "max_sessions", 1 << 20, 1, 1LL << 28));
  config.max_mappings = static_cast<std::size_t>(integer_at(*nat, "nat", "max_mappings", 1 << 18, 1, 1LL << 26));
  config.port_quota = static_cast<std::uint32_t>(integer_at(*nat, "nat", "port_quota", 0, 0, 65535));
  config.icmp_on_exhaustion = bool_at(*nat, "nat", "icmp_on_exhaustion", false);
  config.fragment_datagrams = static_cast<std::size_t>(integer_at(*nat, "nat", "fragment_datagrams", 1024, 1, 1 << 20));
  config.fragments_held = static_cast<std::size_t>(integer_at(*nat, "nat", "fragments_held", 64, 0, 4096));
  config.fragment_timeout = static_cast<Nanos>(integer_at(*nat, "nat", "fragment_timeout", 5, 1, 60)) * kNanosPerSecond;
  config.seed = static_cast<std::uint64_t>(integer_at(*nat, "nat", "seed", 1, 0, INT64_MAX));
  config.block_size = static_cast<std::uint16_t>(integer_at(*nat, "nat", "block_size", 0, 0, 65535));
  config.block_log = string_at(*nat, "nat", "block_log", "");
  config.block_log_syslog = bool_at(*nat, "nat", "block_log_syslog", false);
  if (config.block_size == 0) {
    for (const char* key : {"block_log", "block_log_syslog"}) {
      if (const Value* v = find(*nat, key)) fail(*v, std::string("nat.") + key, "needs block_size: ports port by port have no blocks to log");
    }
  }
  config.timeouts = timeouts_of(root, nat_timeouts());
  return config;
}

}  // namespace flowtrack

namespace flowtrack {

DataplaneConfig load_dataplane_config(const std::string& path) {
  const Value root = parse_file(path);
  check_top_level(root);
  const Value* plane = section(root, "dataplane");
  if (plane == nullptr) fail(root, "dataplane", "missing: a live run needs a [dataplane] table naming its ports");
  only_keys(*plane, "dataplane");
  DataplaneConfig config;
  config.stats_interval = static_cast<Nanos>(integer_at(*plane, "dataplane", "stats_interval", 2, 1, 3600)) * kNanosPerSecond;
  config.control_socket = string_at(*plane, "dataplane", "control_socket", "");
  config.control_group = string_at(*plane, "dataplane", "control_group", "");
  if (!config.control_group.empty() && config.control_socket.empty()) {
    fail(*find(*plane, "control_group"), "dataplane.control_group", "there is no control_socket to open to it");
  }
  if (const Value* metrics = find(*plane, "metrics")) {
    const std::string text = string_at(*plane, "dataplane", "metrics", "");
    const auto colon = text.rfind(':');
    in_addr address{};
    int port = -1;
    if (colon != std::string::npos && colon + 1 < text.size() && text.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
        text.size() - colon <= 6) {
      port = std::stoi(text.substr(colon + 1));
    }
    if (port < 1 || port > 65535 || inet_pton(AF_INET, text.substr(0, colon).c_str(), &address) != 1) {
      fail(*metrics, "dataplane.metrics", fmt::format("'{}' is not an IPv4 address and port such as \"127.0.0.1:9469\"", text));
    }
    config.metrics = DataplaneListen{address.s_addr, static_cast<std::uint16_t>(port)};
  }
  const Value* ports = find(*plane, "port");
  if (ports == nullptr || !ports->is_array() || ports->as_array().empty() || ports->as_array().size() > 2) {
    fail(ports != nullptr ? *ports : *plane, "dataplane.port", "expected one or two [[dataplane.port]] tables");
  }
  for (const Value& p : ports->as_array()) {
    if (!p.is_table()) fail(p, "dataplane.port", "expected a table");
    only_keys(p, "dataplane.port");
    DataplanePortConfig port;
    port.device = string_at(p, "dataplane.port", "device", "", true);
    std::tie(port.address, port.prefix_length) = prefix_at(p, "dataplane.port", "address", "10.10.1.1/24");
    if (find(p, "gateway") != nullptr) port.gateway = address_at(p, "dataplane.port", "gateway");
    config.ports.push_back(port);
  }
  if (const Value* neighbors = find(*plane, "neighbor")) {
    if (!neighbors->is_array()) fail(*neighbors, "dataplane.neighbor", "expected [[dataplane.neighbor]] tables");
    for (const Value& n : neighbors->as_array()) {
      if (!n.is_table()) fail(n, "dataplane.neighbor", "expected a table");
      only_keys(n, "dataplane.neighbor");
      const std::string mac = string_at(n, "dataplane.neighbor", "mac", "", true);
      const auto parsed = parse_mac(mac);
      if (!parsed) fail(*find(n, "mac"), "dataplane.neighbor.mac", fmt::format("'{}' is not a MAC address such as \"02:00:00:00:00:01\"", mac));
      config.neighbors.push_back({address_at(n, "dataplane.neighbor", "address"), *parsed});
    }
  }
  return config;
}

}  // namespace flowtrack
