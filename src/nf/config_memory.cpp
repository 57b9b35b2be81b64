#include "flowtrack/nf/config_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/util/available_memory.hpp"

namespace flowtrack {
namespace {

constexpr std::uint64_t kConnectionBytes = 225;      // stateful LB connection, NAT session
constexpr std::uint64_t kMappingBytes = 58;          // NAT mapping
constexpr std::uint64_t kRemoteBytes = 32;           // NAT address-dependent filtering, per session
constexpr std::uint64_t kQuotaBytes = 16;            // NAT port quota, per mapping
constexpr std::uint64_t kFragmentBytes = 64;         // NAT fragment cache and held fragments, per slot
constexpr std::uint64_t kConcuryConnectionBytes = 9;
constexpr std::uint64_t kConcuryServiceBytes = 1 << 20;
constexpr std::uint64_t kBackendBytes = 128;         // a backend's configuration and counters
constexpr std::uint64_t kMaglevEntryBytes = 4;

// Past these a build takes a second or more here (a 16M-entry Maglev table: 1.5 s of CPU; 4M
// connections of the stateful LB: about 3 s; a schedule of 128 changes to a 65537-entry table's
// service: 0.3 s, and the rehearsal of a trace doubles it), so it is announced.
constexpr std::uint64_t kSlowBytes = std::uint64_t{512} << 20;
constexpr std::uint64_t kSlowMaglevEntries = std::uint64_t{8} << 20;

// Saturating: a product past 2^64 is "more than any machine has" all the same.
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

std::uint64_t plus(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

bool same_backends(const ServiceConfig& a, const ServiceConfig& b) {
  return std::ranges::equal(a.backends, b.backends,
                            [](const BackendConfig& x, const BackendConfig& y) { return x.name == y.name && x.weight == y.weight; });
}

// One instance's services: their tables (each service holds one), their backends, and the entries
// to fill (a service of the same pool as the one before it copies that one's table: backend_pool.hpp).
Footprint services_footprint(std::span<const ServiceConfig> services, std::uint32_t maglev_size) {
  Footprint f;
  for (std::size_t i = 0; i < services.size(); ++i) {
    f.bytes = plus(f.bytes, plus(times(maglev_size, kMaglevEntryBytes), times(services[i].backends.size(), kBackendBytes)));
    if (i == 0 || !same_backends(services[i - 1], services[i])) f.maglev_entries = plus(f.maglev_entries, maglev_size);
  }
  return f;
}

Footprint instances_of(Footprint one, unsigned instances, const std::string& what) {
  return {times(one.bytes, instances), times(one.maglev_entries, instances),
          fmt::format("{} instance{} of {}", instances, instances == 1 ? "" : "s", what)};
}

std::string services_text(std::size_t services, std::uint32_t maglev_size) {
  return fmt::format("{} service{} with Maglev tables of {} entries", services, services == 1 ? "" : "s", maglev_size);
}

}  // namespace

Footprint stateless_lb_footprint(const StatelessLbConfig& config, unsigned instances) {
  return instances_of(services_footprint(config.services, config.maglev_size), instances,
                      services_text(config.services.size(), config.maglev_size));
}

// The balancers' services and their schedule: each change refills a table when it comes due.
Footprint balancer_footprint(const StatefulLbConfig& config) {
  Footprint one = services_footprint(config.services, config.maglev_size);
  one.maglev_entries = plus(one.maglev_entries, times(config.changes.size(), config.maglev_size));
  one.what = fmt::format("{} and {} connections{}", services_text(config.services.size(), config.maglev_size), config.max_connections,
                         config.changes.empty() ? "" : fmt::format(", {} pool changes", config.changes.size()));
  return one;
}

Footprint stateful_lb_footprint(const StatefulLbConfig& config, unsigned instances) {
  Footprint one = balancer_footprint(config);
  one.bytes = plus(one.bytes, times(config.max_connections, kConnectionBytes));
  return instances_of(one, instances, one.what);
}

Footprint concury_footprint(const StatefulLbConfig& config, unsigned instances) {
  Footprint one = balancer_footprint(config);
  one.bytes = plus(one.bytes, plus(times(config.max_connections, kConcuryConnectionBytes), times(config.services.size(), kConcuryServiceBytes)));
  return instances_of(one, instances, one.what);
}

Footprint nat_footprint(const NatConfig& config, unsigned instances) {
  const bool remotes = config.filtering == NatFiltering::address_dependent;
  const bool quota = config.port_quota != 0;
  Footprint one;
  one.bytes = plus(times(config.max_sessions, kConnectionBytes + (remotes ? kRemoteBytes : 0)),
                   plus(times(config.max_mappings, kMappingBytes + (quota ? kQuotaBytes : 0)),
                        times(config.fragment_datagrams + config.fragments_held, kFragmentBytes)));
  return instances_of(one, instances, fmt::format("{} sessions and {} mappings", config.max_sessions, config.max_mappings));
}

void check_footprint(const Footprint& footprint, const std::string& source) {
  const std::uint64_t available = available_memory_bytes();
  if (footprint.bytes <= available) return;
  throw ConfigError(fmt::format("{}: {} would take about {}; this machine has {} available (MemAvailable)", source, footprint.what,
                                memory_size_text(footprint.bytes), memory_size_text(available)));
}

bool builds_slowly(const Footprint& footprint) {
  return footprint.bytes >= kSlowBytes || footprint.maglev_entries >= kSlowMaglevEntries;
}

}  // namespace flowtrack
