#include "flowtrack/nf/pool_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace flowtrack {

std::optional<PoolAction> pool_action_from_name(std::string_view name) {
  if (name == "add") return PoolAction::add;
  if (name == "remove") return PoolAction::remove;
  if (name == "drain") return PoolAction::drain;
  if (name == "weight") return PoolAction::weight;
  if (name == "down") return PoolAction::down;
  if (name == "up") return PoolAction::up;
  return std::nullopt;
}

std::optional<PoolChangeProblem> check_pool_changes(std::span<const PoolChange> changes,
                                                    std::span<const ServiceConfig> services, std::uint32_t maglev_size) {
  // Services of one name share their backend list (services_of repeats one [[service]] per VIP and
  // port), so the replay keeps one name set per service name (by name: a configuration may list tens of
  // thousands of services).
  std::map<std::string, std::set<std::string>, std::less<>> pools;
  std::set<std::string, std::less<>> tunnelled;  // services whose backends take no port (nf/tunnel.hpp)
  for (const ServiceConfig& s : services) {
    const auto [pool, fresh] = pools.try_emplace(s.name);
    if (!fresh) continue;
    for (const BackendConfig& b : s.backends) pool->second.insert(b.name);
    if (s.tunnel.tunnels()) tunnelled.insert(s.name);
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const PoolChange& c = changes[i];
    if (c.at > kMaxTimeout) return PoolChangeProblem{i, "at", "too far in the future"};
    const auto pool = pools.find(c.service);
    if (pool == pools.end()) return PoolChangeProblem{i, "service", fmt::format("no service is named '{}'", c.service)};
    std::set<std::string>& names = pool->second;
    const bool present = names.contains(c.backend.name);
    if (c.action == PoolAction::add) {
      if (c.backend.port != 0 && tunnelled.contains(c.service)) {
        return PoolChangeProblem{i, "port", fmt::format("service '{}' tunnels the client's packet as it is: its backends take no port", c.service)};
      }
      if (present) {
        return PoolChangeProblem{i, "backend", fmt::format("'{}' is already in service '{}'", c.backend.name, c.service)};
      }
      names.insert(c.backend.name);
      if (names.size() > max_backends_for(maglev_size)) {
        return PoolChangeProblem{i, "backend",
                                 fmt::format("service '{}' would have {} backends; a Maglev table of {} entries takes at most {}",
                                             c.service, names.size(), maglev_size, max_backends_for(maglev_size))};
      }
      continue;
    }
    if (!present) {
      return PoolChangeProblem{i, "backend", fmt::format("service '{}' has no backend '{}' at that time", c.service, c.backend.name)};
    }
    if (c.action == PoolAction::remove) names.erase(c.backend.name);
  }
  return std::nullopt;
}

PoolChangeSchedule::PoolChangeSchedule(std::vector<PoolChange> changes, std::span<const ServiceConfig> services,
                                       std::uint32_t maglev_size)
    : changes_(std::move(changes)) {
  std::ranges::stable_sort(changes_, {}, &PoolChange::at);  // changes at one time keep their order
  if (const auto problem = check_pool_changes(changes_, services, maglev_size)) {
    throw std::invalid_argument(fmt::format("change {}: {}: {}", problem->index, problem->key, problem->problem));
  }
  if (changes_.empty()) next_at_ = kNever;
}

void apply_pool_change(const PoolChange& change, std::span<Service> services) {
  const Service* changed = nullptr;  // the first service of the name, whose new table the others take
  for (Service& s : services) {
    if (s.config().name != change.service) continue;
    switch (change.action) {
      case PoolAction::add: s.add_backend(change.backend, changed); break;
      case PoolAction::remove: s.remove_backend(change.backend.name, changed); break;
      case PoolAction::drain: s.set_weight(change.backend.name, 0, changed); break;
      case PoolAction::weight: s.set_weight(change.backend.name, change.backend.weight, changed); break;
      case PoolAction::down: s.set_down(change.backend.name, true, changed); break;
      case PoolAction::up: s.set_down(change.backend.name, false, changed); break;
    }
    if (changed == nullptr) changed = &s;
  }
}

}  // namespace flowtrack
