#include "flowtrack/nf/route_announcement.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace flowtrack {

std::vector<std::uint32_t> vips_with_a_healthy_backend(std::span<const ServiceConfig> configured, std::span<const PoolChange> applied,
                                                       const UnhealthyBackends& unhealthy) {
  // Each service name's pool by backend name: its weight and whether `ctl down` holds it.
  struct Member {
    std::uint32_t weight = 0;
    bool down = false;
  };
  std::map<std::string, std::map<std::string, Member>> pools;
  for (const ServiceConfig& s : configured) {
    auto& pool = pools[s.name];  // the services of one name share their pool: the first one's stands
    if (!pool.empty()) continue;
    for (const BackendConfig& b : s.backends) pool[b.name] = {b.weight, false};
  }
  for (const PoolChange& c : applied) {
    auto& pool = pools[c.service];
    switch (c.action) {
      case PoolAction::add: pool[c.backend.name] = {c.backend.weight, false}; break;
      case PoolAction::remove: pool.erase(c.backend.name); break;
      case PoolAction::drain: pool[c.backend.name].weight = 0; break;
      case PoolAction::weight: pool[c.backend.name].weight = c.backend.weight; break;
      case PoolAction::down: pool[c.backend.name].down = true; break;
      case PoolAction::up: pool[c.backend.name].down = false; break;
    }
  }
  std::vector<std::uint32_t> vips;
  for (const ServiceConfig& s : configured) {
    const bool healthy = std::ranges::any_of(pools[s.name], [&](const auto& member) {
      return member.second.weight > 0 && !member.second.down && !unhealthy.contains({s.name, member.first});
    });
    if (healthy) vips.push_back(s.vip);
  }
  std::ranges::sort(vips, [](std::uint32_t a, std::uint32_t b) { return ntohl(a) < ntohl(b); });
  vips.erase(std::unique(vips.begin(), vips.end()), vips.end());
  return vips;
}

std::string bird_static_routes(std::span<const std::uint32_t> vips) {
  std::string text = "# The VIPs this flowtrack instance serves with a healthy backend (none while it is stopped or drained).\n";
  for (const std::uint32_t vip : vips) {
    char dotted[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &vip, dotted, sizeof dotted);
    text += fmt::format("route {}/32 blackhole;\n", dotted);
  }
  return text;
}

}  // namespace flowtrack
