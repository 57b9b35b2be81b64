#include "flowtrack/nf/nf_config.hpp"

#include "flowtrack/nf/config_keys.hpp"
#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/lb_exceptions.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
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

std::string dotted(std::uint32_t address) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address, text, sizeof text);
  return text;
}

std::uint32_t mask_of(std::uint8_t prefix_length) {
  return prefix_length == 0 ? 0 : to_network32(~std::uint32_t{0} << (32 - prefix_length));
}

// Every address the functions take one by one (a VIP, a backend, a pool address, a gateway, a
// neighbour) is a host's: why `address` (network order) cannot be one, or nothing.
std::optional<std::string> not_a_host(std::uint32_t address) {
  const std::uint32_t host = to_host32(address);
  if (host >> 24 == 0) return "0.0.0.0/8 means this network, no host";
  if (host >> 24 == 127) return "127.0.0.0/8 is loopback";
  if (host >> 28 == 0xe) return "224.0.0.0/4 is multicast";
  if (host == 0xffffffff) return "it is the broadcast address";
  return std::nullopt;
}

void check_host(const Value& at, const std::string& key, std::uint32_t address) {
  if (const auto why = not_a_host(address)) fail(at, key, fmt::format("'{}' cannot be a host's address: {}", dotted(address), *why));
}

std::uint32_t address_at(const Value& table, const std::string& where, const std::string& key) {
  const std::string text = string_at(table, where, key, "", true);
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) {
    fail(*find(table, key), where + "." + key, fmt::format("'{}' is not an IPv4 address", text));
  }
  check_host(*find(table, key), where + "." + key, parsed.s_addr);
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
    check_host(item, where + "." + key, parsed.s_addr);
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

// The parser sees the text only within its bounds (config_text.hpp).
Value parse(const ConfigText& config) {
  check_config_bounds(config);
  std::istringstream in(config.text);
  try {
    return toml::parse(in, config.name);
  } catch (const toml::syntax_error& e) {
    throw ConfigError(fmt::format("{}: not valid TOML: {}", config.name, e.what()));
  } catch (const std::runtime_error& e) {
    throw ConfigError(fmt::format("{}: {}", config.name, e.what()));
  }
}

// How a [[service]] table's packets reach its backends (nf/tunnel.hpp): `forward`, and for a tunnel its
// source address, MTU and (GUE) port. A key that only a tunnel or only GUE takes is an error elsewhere.
TunnelConfig tunnel_of(const Value& s) {
  TunnelConfig tunnel;
  const std::string forward = string_at(s, "service", "forward", "nat");
  const auto mode = forward_mode_from_name(forward);
  if (!mode) fail(*find(s, "forward"), "service.forward", "expected \"nat\", \"ipip\" or \"gue\"");
  tunnel.mode = *mode;
  if (!tunnel.tunnels()) {
    for (const char* key : {"tunnel_source", "mtu", "gue_port"}) {
      if (find(s, key) != nullptr) fail(*find(s, key), fmt::format("service.{}", key), "only a tunnel (forward = \"ipip\" or \"gue\") takes it");
    }
    return tunnel;
  }
  tunnel.source = address_at(s, "service", "tunnel_source");
  tunnel.mtu = static_cast<std::uint16_t>(integer_at(s, "service", "mtu", kDefaultTunnelMtu, 576, 65535));
  if (tunnel.mode != ForwardMode::gue && find(s, "gue_port") != nullptr) {
    fail(*find(s, "gue_port"), "service.gue_port", "only forward = \"gue\" takes it");
  }
  tunnel.gue_port = to_network16(static_cast<std::uint16_t>(integer_at(s, "service", "gue_port", kDefaultGuePort, 1, 65535)));
  return tunnel;
}

// A number of seconds (integer or not) in [low, high] at `key` of `table`, or `fallback` when absent.
Nanos seconds_at(const Value& table, const std::string& where, const std::string& key, Nanos fallback, double low, double high) {
  const Value* v = find(table, key);
  if (v == nullptr) return fallback;
  const double seconds = v->is_integer() ? static_cast<double>(v->as_integer()) : v->is_floating() ? v->as_floating() : -1;
  if (!(seconds >= low && seconds <= high)) fail(*v, where + "." + key, fmt::format("expected seconds in {}..{}, such as 0.5", low, high));
  return static_cast<Nanos>(seconds * 1e9 + 0.5);
}

// A [[service]]'s [service.health] table: how its backends are checked (nf/health_config.hpp).
HealthCheckConfig health_of(const Value& h) {
  if (!h.is_table()) fail(h, "service.health", "expected a table");
  only_keys(h, "service.health");
  const std::string where = "service.health";
  HealthCheckConfig c;
  const std::string probe = string_at(h, where, "probe", "tcp");
  if (probe == "tcp") c.probe = HealthProbe::tcp;
  else if (probe == "http") c.probe = HealthProbe::http;
  else fail(*find(h, "probe"), where + ".probe", "expected \"tcp\" or \"http\"");
  if (c.probe != HealthProbe::http) {
    for (const char* key : {"path", "status", "body"}) {
      if (find(h, key) != nullptr) fail(*find(h, key), fmt::format("{}.{}", where, key), "only probe = \"http\" takes it");
    }
  }
  c.port = to_network16(static_cast<std::uint16_t>(integer_at(h, where, "port", 0, 0, 65535)));
  c.path = string_at(h, where, "path", c.path);
  // The path goes into the request line as it is: nothing that would end it or the line.
  if (c.path.empty() || c.path[0] != '/' || c.path.size() > 1024 || c.path.find_first_of(" \r\n\t") != std::string::npos) {
    fail(*find(h, "path"), where + ".path", "expected a path such as \"/health\": starting with '/', without spaces, at most 1024 bytes");
  }
  c.status = static_cast<std::uint16_t>(integer_at(h, where, "status", c.status, 100, 599));
  c.body = string_at(h, where, "body", "");
  if (c.body.size() > 1024) fail(*find(h, "body"), where + ".body", "at most 1024 bytes");
  c.interval = seconds_at(h, where, "interval", c.interval, 0.01, 3600);
  c.timeout = seconds_at(h, where, "timeout", std::min(c.timeout, c.interval), 0.001, 3600);
  if (c.timeout > c.interval) fail(*find(h, "timeout"), where + ".timeout", "a probe must end before the next begins: at most the interval");
  c.rise = static_cast<std::uint32_t>(integer_at(h, where, "rise", c.rise, 1, 100));
  c.fall = static_cast<std::uint32_t>(integer_at(h, where, "fall", c.fall, 1, 100));
  if (const Value* jitter = find(h, "jitter")) {
    const double j = jitter->is_integer() ? static_cast<double>(jitter->as_integer()) : jitter->is_floating() ? jitter->as_floating() : -1;
    if (!(j >= 0 && j <= 0.5)) fail(*jitter, where + ".jitter", "expected a share of the interval in 0..0.5");
    c.jitter = j;
  }
  const std::string all_down = string_at(h, where, "all_down", "fail_open");
  if (all_down == "fail_open") c.all_down = AllDown::fail_open;
  else if (all_down == "drop") c.all_down = AllDown::drop;
  else fail(*find(h, "all_down"), where + ".all_down", "expected \"fail_open\" or \"drop\"");
  return c;
}

// maglev_size_key names the option that sets the table size, for the error when a service has more
// backends than the table can share evenly.
std::vector<ServiceConfig> services_of(const Value& root, std::uint32_t maglev_size, const std::string& maglev_size_key) {
  const Value* list = find(root, "service");
  if (list == nullptr) fail(root, "service", "missing: at least one [[service]] is needed");
  if (!list->is_array()) fail(*list, "service", "expected [[service]] tables");
  std::vector<ServiceConfig> services;
  // Where each name and each (VIP, port, protocol) was first given: one service each. Values, not
  // lines: toml11 finds a value's line by counting from the file's start, so only an error asks.
  std::map<std::string, const Value*> names;
  std::map<std::tuple<std::uint32_t, std::uint16_t, std::uint8_t>, std::pair<std::string, const Value*>> endpoints;
  for (const Value& s : list->as_array()) {
    if (!s.is_table()) fail(s, "service", "expected a table");
    only_keys(s, "service");
    ServiceConfig service;
    service.name = string_at(s, "service", "name", fmt::format("service-{}", services.size()));
    const Value& name_at = find(s, "name") != nullptr ? *find(s, "name") : s;
    if (const auto [first, fresh] = names.try_emplace(service.name, &name_at); !fresh) {
      fail(name_at, "service.name",
           fmt::format("'{}' is the name of the service at line {} too", service.name, first->second->location().line()));
    }
    const std::string protocol = string_at(s, "service", "protocol", "tcp");
    if (protocol == "tcp") service.protocol = ipproto::kTcp;
    else if (protocol == "udp") service.protocol = ipproto::kUdp;
    else fail(*find(s, "protocol"), "service.protocol", "expected \"tcp\" or \"udp\"");
    const std::vector<std::uint32_t> vips = addresses_at(s, "service", "vip");
    const std::vector<std::uint16_t> ports = ports_at(s, "service", "port");
    service.tunnel = tunnel_of(s);
    if (const Value* health = find(s, "health")) service.health = health_of(*health);
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
      if (backend.port != 0 && service.tunnel.tunnels()) {
        fail(*find(b, "port"), "service.backend.port", "a tunnel delivers the client's packet as it is, to the service's port");
      }
      backend.weight = static_cast<std::uint32_t>(integer_at(b, "service.backend", "weight", 1, 0, 1'000'000));
      service.backends.push_back(backend);
    }
    if (service.backends.size() > max_backends_for(maglev_size)) {
      fail(*backends, "service.backend",
           fmt::format("{} backends: Maglev needs a table of more than 100 entries per backend ({} = {} takes at most {})",
                       service.backends.size(), maglev_size_key, maglev_size, max_backends_for(maglev_size)));
    }
    // One service per (vip, port): both may be given as arrays, the service is then repeated.
    const Value& vip_at = *find(s, "vip");
    if (services.size() + vips.size() * ports.size() > kMaxServices) {
      fail(vip_at, "service.vip", fmt::format("{} services so far and {} VIPs x {} ports here: at most {} services in all",
                                              services.size(), vips.size(), ports.size(), kMaxServices));
    }
    for (const std::uint32_t vip : vips) {
      for (const std::uint16_t port : ports) {
        const auto [first, fresh] = endpoints.try_emplace({vip, port, service.protocol}, service.name, &vip_at);
        if (!fresh) {
          fail(vip_at, "service.vip", fmt::format("{} port {} {} is service '{}''s (line {}) already", dotted(vip), to_host16(port),
                                                  protocol, first->second.first, first->second.second->location().line()));
        }
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
  if (list->as_array().size() > kMaxPoolChanges) {
    fail(list->as_array()[kMaxPoolChanges], "change",
         fmt::format("{} [[change]] tables: at most {}", list->as_array().size(), kMaxPoolChanges));
  }
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
  if (read.size() * std::uint64_t{maglev_size} > kMaxScheduleEntries) {
    fail(*list, "change",
         fmt::format("{} [[change]] tables each refill a Maglev table of {} entries: {} entries in all, at most {} (fewer changes or "
                     "a smaller maglev_size)",
                     read.size(), maglev_size, read.size() * std::uint64_t{maglev_size}, kMaxScheduleEntries));
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

// The NAT's public addresses (`pool`, read into config.pool in its order) are outside its inside
// network and given once each.
void check_pool(const Value& pool, const NatConfig& config) {
  const auto item = [&](std::size_t i) -> const Value& { return pool.is_array() ? pool.as_array()[i] : pool; };
  const std::uint32_t mask = mask_of(config.inside_prefix_length);
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < config.pool.size(); ++i) {
    const std::uint32_t address = config.pool[i];
    if ((address & mask) == (config.inside_network & mask)) {
      fail(item(i), "nat.pool", fmt::format("'{}' is inside the inside network {}/{}: a public address is outside it", dotted(address),
                                            dotted(config.inside_network & mask), config.inside_prefix_length));
    }
    if (!seen.insert(address).second) fail(item(i), "nat.pool", fmt::format("'{}' appears twice", dotted(address)));
  }
}

// The ports of [dataplane] (`tables`, read into `ports` in their order): each address is a host of its
// own network, no two networks overlap (an address would be on two ports), and every gateway is on a
// port's network without being a port's own address.
void check_ports(const toml::array& tables, const std::vector<DataplanePortConfig>& ports) {
  const auto network = [](const DataplanePortConfig& p) {
    return fmt::format("{}/{}", dotted(p.address & mask_of(p.prefix_length)), p.prefix_length);
  };
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const Value& address = *find(tables[i], "address");
    const DataplanePortConfig& p = ports[i];
    check_host(address, "dataplane.port.address", p.address);
    const std::uint32_t host_part = p.address & ~mask_of(p.prefix_length);
    if (p.prefix_length <= 30 && (host_part == 0 || host_part == ~mask_of(p.prefix_length))) {
      fail(address, "dataplane.port.address", fmt::format("'{}' is the {} address of {}, no host's", dotted(p.address),
                                                          host_part == 0 ? "network" : "broadcast", network(p)));
    }
    for (std::size_t j = 0; j < i; ++j) {
      const std::uint32_t mask = mask_of(std::min(p.prefix_length, ports[j].prefix_length));
      if ((p.address & mask) != (ports[j].address & mask)) continue;
      fail(address, "dataplane.port.address",
           p.address == ports[j].address
               ? fmt::format("'{}' is port {}'s address too", dotted(p.address), j)
               : fmt::format("{} overlaps port {}'s network {}: an address must be on one port only", network(p), j, network(ports[j])));
    }
  }
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].gateway == 0) continue;
    const Value& gateway = *find(tables[i], "gateway");
    std::vector<std::string> networks;
    bool attached = false;
    for (std::size_t j = 0; j < ports.size(); ++j) {
      if (ports[i].gateway == ports[j].address) {
        fail(gateway, "dataplane.port.gateway", fmt::format("'{}' is port {}'s own address", dotted(ports[i].gateway), j));
      }
      const std::uint32_t mask = mask_of(ports[j].prefix_length);
      attached = attached || (ports[i].gateway & mask) == (ports[j].address & mask);
      networks.push_back(network(ports[j]));
    }
    if (!attached) {
      fail(gateway, "dataplane.port.gateway", fmt::format("'{}' is on no port's network ({}): a next hop is directly attached",
                                                          dotted(ports[i].gateway), fmt::join(networks, ", ")));
    }
  }
}

// A NAT's timeouts are at least the RFC minimums (nat44_config.hpp) unless [nat] says
// below_rfc_minimums = true; the error names the [timeouts] key that is short.
void check_rfc_minimums(const Value& root, const ConntrackTimeouts& timeouts) {
  const auto shortfall = nat_timeout_below_rfc_minimum(timeouts);
  if (!shortfall) return;
  // Only a [timeouts] key can be short: nat_timeouts(), the defaults, meet every minimum.
  const Value& key = *find(*find(root, "timeouts"), shortfall->key);
  fail(key, "timeouts." + shortfall->key,
       fmt::format("{} s is below the {} s that {} requires for {}; `below_rfc_minimums = true` in [nat] allows it (tests, labs)",
                   shortfall->value / kNanosPerSecond, shortfall->minimum / kNanosPerSecond, shortfall->requirement,
                   shortfall->subject));
}

}  // namespace

StatelessLbConfig load_stateless_lb_config(const ConfigText& text) {
  const Value root = parse(text);
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

StatefulLbConfig load_stateful_lb_config(const ConfigText& text) {
  const Value root = parse(text);
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
    config.new_connection_rate = static_cast<std::uint64_t>(integer_at(*lb, "lb", "new_connection_rate", 0, 0, 100'000'000));
    config.new_connection_burst = static_cast<std::uint64_t>(integer_at(*lb, "lb", "new_connection_burst", 0, 0, 10'000'000));
    if (config.new_connection_burst != 0 && config.new_connection_rate == 0) {
      fail(*find(*lb, "new_connection_burst"), "lb.new_connection_burst", "there is no new_connection_rate to burst above");
    }
    if (const Value* key = find(*lb, "deployment_key")) {
      if (config.policy != LbPolicy::maglev) {
        fail(*key, "lb.deployment_key",
             fmt::format("instances choose alike by maglev only; policy {} chooses per instance", lb_policy_name(config.policy)));
      }
      const std::string path = string_at(*lb, "lb", "deployment_key", "");
      // The file's problem, never its content: the message names the path and what is wrong with it.
      try {
        config.deployment_key = DeploymentKey::from_file(path);
      } catch (const std::runtime_error& e) {
        fail(*key, "lb.deployment_key", e.what());
      }
    }
  }
  config.timeouts = timeouts_of(root);
  config.services = services_of(root, config.maglev_size, "lb.maglev_size");
  config.changes = changes_of(root, config.services, config.maglev_size);
  return config;
}

NatConfig load_nat_config(const ConfigText& text) {
  const Value root = parse(text);
  check_top_level(root);
  NatConfig config;
  const Value* nat = section(root, "nat");
  if (nat == nullptr) fail(root, "nat", "missing: a [nat] table is needed");
  only_keys(*nat, "nat");
  std::tie(config.inside_network, config.inside_prefix_length) = prefix_at(*nat, "nat", "inside", "10.0.0.0/16");
  config.pool = addresses_at(*nat, "nat", "pool");
  check_pool(*find(*nat, "pool"), config);
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
  if (!bool_at(*nat, "nat", "below_rfc_minimums", false)) check_rfc_minimums(root, config.timeouts);
  return config;
}

void check_forwarder_config(const ConfigText& text) { check_top_level(parse(text)); }

StatelessLbConfig load_stateless_lb_config(const std::string& path) { return load_stateless_lb_config(read_config_file(path)); }
StatefulLbConfig load_stateful_lb_config(const std::string& path) { return load_stateful_lb_config(read_config_file(path)); }
NatConfig load_nat_config(const std::string& path) { return load_nat_config(read_config_file(path)); }

}  // namespace flowtrack

namespace flowtrack {
namespace {

// What each role's port faces, for the messages that ask for it.
std::string role_wanted(PortRole role) {
  const std::string_view faces = role == PortRole::inside     ? "the private network"
                                 : role == PortRole::outside  ? "the public side, where the pool is"
                                 : role == PortRole::clients  ? "the clients, who reach the VIPs"
                                                              : "the backends";
  return fmt::format("role = \"{}\" ({})", port_role_name(role), faces);
}

std::string roles_wanted(const std::vector<PortRole>& roles) {
  std::string text;
  for (const PortRole role : roles) text += fmt::format("{}{}", text.empty() ? "" : " and one with ", role_wanted(role));
  return text;
}

// An IPv4 address and port written "ADDRESS:PORT" at `key` of `table` (`example` shows the form).
// An "address:port" string, the value `at` (for the error) of `where`.`key`.
DataplaneListen listen_of(const std::string& text, const Value& at, const std::string& where, const std::string& key,
                          std::string_view example) {
  const auto colon = text.rfind(':');
  in_addr address{};
  int port = -1;
  if (colon != std::string::npos && colon + 1 < text.size() && text.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
      text.size() - colon <= 6) {
    port = std::stoi(text.substr(colon + 1));
  }
  if (port < 1 || port > 65535 || inet_pton(AF_INET, text.substr(0, colon).c_str(), &address) != 1) {
    fail(at, where + "." + key, fmt::format("'{}' is not an IPv4 address and port such as \"{}\"", text, example));
  }
  return DataplaneListen{address.s_addr, static_cast<std::uint16_t>(port)};
}

DataplaneListen listen_at(const Value& table, const std::string& where, const std::string& key, std::string_view example) {
  return listen_of(string_at(table, where, key, ""), *find(table, key), where, key, example);
}

bool same_endpoint(const DataplaneListen& a, const DataplaneListen& b) { return a.address == b.address && a.port == b.port; }

}  // namespace

std::vector<PortRole> port_roles_of(std::string_view nf) {
  if (nf == "nat") return {PortRole::inside, PortRole::outside};
  if (nf == "lb" || nf == "concury") return {PortRole::clients, PortRole::backends};
  return {};
}

DataplaneConfig load_dataplane_config(const std::string& path, std::string_view nf) {
  return load_dataplane_config(read_config_file(path), nf);
}

DataplaneConfig load_dataplane_config(const ConfigText& text, std::string_view nf) {
  const Value root = parse(text);
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
  if (find(*plane, "metrics") != nullptr) config.metrics = listen_at(*plane, "dataplane", "metrics", "127.0.0.1:9469");
  config.rx_queues = static_cast<unsigned>(integer_at(*plane, "dataplane", "rx_queues", 0, 0, 1024));
  config.mbufs = static_cast<std::size_t>(integer_at(*plane, "dataplane", "mbufs", 0, 0, 1LL << 30));
  // The mbuf's room (headroom and frame) is 16 bits: the headroom's 128 bytes leave the rest to a frame.
  config.mbuf_size = static_cast<std::uint16_t>(integer_at(*plane, "dataplane", "mbuf_size", kDefaultMbufSize, 64, 65535 - 128));
  const Value* ports = find(*plane, "port");
  if (ports == nullptr || !ports->is_array() || ports->as_array().empty() || ports->as_array().size() > 2) {
    fail(ports != nullptr ? *ports : *plane, "dataplane.port", "expected one or two [[dataplane.port]] tables");
  }
  // The function's boundary: each port faces one side, and each side has its port.
  const std::vector<PortRole> roles = port_roles_of(nf);
  if (!roles.empty() && ports->as_array().size() != roles.size()) {
    fail(*ports, "dataplane.port", fmt::format("nf {} needs {} ports: one with {}", nf, roles.size(), roles_wanted(roles)));
  }
  for (const Value& p : ports->as_array()) {
    if (!p.is_table()) fail(p, "dataplane.port", "expected a table");
    only_keys(p, "dataplane.port");
    DataplanePortConfig port;
    port.device = string_at(p, "dataplane.port", "device", "", true);
    std::tie(port.address, port.prefix_length) = prefix_at(p, "dataplane.port", "address", "10.10.1.1/24");
    if (find(p, "gateway") != nullptr) port.gateway = address_at(p, "dataplane.port", "gateway");
    const Value* role = find(p, "role");
    if (role == nullptr && !roles.empty()) {
      fail(p, "dataplane.port.role", fmt::format("missing: nf {} needs one port with {}", nf, roles_wanted(roles)));
    }
    if (role != nullptr) {
      if (roles.empty()) fail(*role, "dataplane.port.role", fmt::format("nf {} takes no port role (nat, lb and concury do)", nf));
      const auto parsed = port_role_from_name(string_at(p, "dataplane.port", "role", ""));
      if (!parsed || std::ranges::find(roles, *parsed) == roles.end()) {
        fail(*role, "dataplane.port.role", fmt::format("nf {} needs one port with {}", nf, roles_wanted(roles)));
      }
      for (const DataplanePortConfig& other : config.ports) {
        if (other.role == *parsed) fail(*role, "dataplane.port.role", fmt::format("'{}' is another port's role too", port_role_name(*parsed)));
      }
      port.role = *parsed;
    }
    config.ports.push_back(port);
  }
  check_ports(ports->as_array(), config.ports);
  if (const Value* pair = find(*plane, "pair")) {
    if (!pair->is_table()) fail(*pair, "dataplane.pair", "expected a table");
    if (nf != "nat") fail(*pair, "dataplane.pair", fmt::format("nf {} runs no pair (nat does)", nf));
    only_keys(*pair, "dataplane.pair");
    PairConfig p;
    const std::string role = string_at(*pair, "dataplane.pair", "role", "", true);
    if (role != "active" && role != "standby") fail(*find(*pair, "role"), "dataplane.pair.role", "expected \"active\" or \"standby\"");
    p.role = role == "active" ? PairConfig::Role::active : PairConfig::Role::standby;
    if (find(*pair, "local") == nullptr) fail(*pair, "dataplane.pair.local", "missing");
    if (find(*pair, "peer") == nullptr) fail(*pair, "dataplane.pair.peer", "missing");
    p.local = listen_at(*pair, "dataplane.pair", "local", "192.0.2.1:7400");
    p.peer = listen_at(*pair, "dataplane.pair", "peer", "192.0.2.2:7400");
    if (p.local.address == p.peer.address && p.local.port == p.peer.port) {
      fail(*find(*pair, "peer"), "dataplane.pair.peer", "the same address and port as local: the peer is another NAT");
    }
    p.key_file = string_at(*pair, "dataplane.pair", "key_file", "", true);
    p.dead_interval = static_cast<Nanos>(integer_at(*pair, "dataplane.pair", "dead_interval_ms", 400, 50, 60000)) * kNanosPerMilli;
    p.sync = bool_at(*pair, "dataplane.pair", "sync", true);
    config.pair = p;
  }
  if (const Value* announce = find(*plane, "announce")) {
    if (!announce->is_table()) fail(*announce, "dataplane.announce", "expected a table");
    if (nf != "slb" && nf != "lb" && nf != "concury") fail(*announce, "dataplane.announce", fmt::format("nf {} has no VIPs to announce (slb, lb and concury have)", nf));
    only_keys(*announce, "dataplane.announce");
    AnnounceConfig a;
    a.file = string_at(*announce, "dataplane.announce", "file", "", true);
    if (a.file.empty()) fail(*find(*announce, "file"), "dataplane.announce.file", "expected a path");
    if (const Value* command = find(*announce, "command")) {
      const auto words = command->is_array() ? &command->as_array() : nullptr;
      if (words == nullptr || words->empty()) fail(*command, "dataplane.announce.command", "expected a list of words, such as [\"birdc\", \"configure\"]");
      for (const Value& word : *words) {
        if (!word.is_string() || word.as_string().str.empty()) fail(word, "dataplane.announce.command", "expected a non-empty string");
        a.command.push_back(word.as_string().str);
      }
    }
    a.linger = static_cast<Nanos>(integer_at(*announce, "dataplane.announce", "linger_ms", 300, 0, 10000)) * kNanosPerMilli;
    config.announce = a;
  }
  if (const Value* peers = find(*plane, "peers")) {
    constexpr std::string_view kWhere = "dataplane.peers";
    if (!peers->is_table()) fail(*peers, std::string(kWhere), "expected a table");
    if (nf != "lb") fail(*peers, std::string(kWhere), fmt::format("nf {} shares no connections with peers (lb does)", nf));
    only_keys(*peers, std::string(kWhere));
    LbPeersConfig p;
    if (find(*peers, "local") == nullptr) fail(*peers, "dataplane.peers.local", "missing");
    p.local = listen_at(*peers, std::string(kWhere), "local", "192.0.2.1:7410");
    p.peers = one_or_many<DataplaneListen>(*peers, std::string(kWhere), "peers", [&](const Value& item) {
      if (!item.is_string()) fail(item, "dataplane.peers.peers", "expected \"address:port\" strings");
      const DataplaneListen peer = listen_of(item.as_string().str, item, std::string(kWhere), "peers", "192.0.2.2:7410");
      if (same_endpoint(peer, p.local)) fail(item, "dataplane.peers.peers", "the same address and port as local: a peer is another instance");
      return peer;
    });
    if (p.peers.size() > kMaxLbPeers) {
      fail(*find(*peers, "peers"), "dataplane.peers.peers", fmt::format("{} peers; at most {}", p.peers.size(), kMaxLbPeers));
    }
    for (std::size_t i = 0; i < p.peers.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (same_endpoint(p.peers[i], p.peers[j])) fail(*find(*peers, "peers"), "dataplane.peers.peers", "a peer listed twice");
      }
    }
    p.key_file = string_at(*peers, std::string(kWhere), "key_file", "", true);
    p.dead_interval = static_cast<Nanos>(integer_at(*peers, std::string(kWhere), "dead_interval_ms", 400, 50, 60000)) * kNanosPerMilli;
    p.max_exceptions = static_cast<std::size_t>(integer_at(*peers, std::string(kWhere), "max_exceptions", 1'000'000, 1, 100'000'000));
    config.peers = p;
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
