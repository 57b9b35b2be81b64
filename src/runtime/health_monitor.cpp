#include "flowtrack/runtime/health_monitor.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace flowtrack {

HealthMonitor::HealthMonitor(std::span<const ServiceConfig> services, Nanos start, std::uint64_t seed) : rng_(seed) {
  std::set<std::pair<std::string, std::string>> seen;  // (service, backend): one target each
  for (const ServiceConfig& s : services) {
    if (!s.health) continue;
    const auto known = std::ranges::find(services_, s.name, &ServiceHealth::name);
    const std::size_t index = static_cast<std::size_t>(known - services_.begin());
    if (known == services_.end()) services_.push_back({s.name, s.health->all_down});
    for (const BackendConfig& b : s.backends) {
      if (!seen.emplace(s.name, b.name).second) continue;
      // The probe's port: the check's own, else the backend's, else the service's (its first VIP and port).
      const std::uint16_t port = s.health->port != 0 ? s.health->port : b.port != 0 ? b.port : s.port;
      targets_.push_back({s.name, b.name, b.address, port, *s.health, s.vip, s.tunnel});
      service_of_.push_back(index);
      in_pool_.push_back(true);
      TargetHealth h;
      // A first probe anywhere within the first interval: a hundred backends are not probed at once.
      h.next_probe = start + static_cast<Nanos>(rng_.unit() * static_cast<double>(s.health->interval));
      health_.push_back(h);
    }
  }
}

Nanos HealthMonitor::draw_interval(const HealthCheckConfig& check) {
  const double spread = check.jitter * (2 * rng_.unit() - 1);
  return static_cast<Nanos>(static_cast<double>(check.interval) * (1 + spread));
}

Nanos HealthMonitor::next_due() const {
  Nanos next = kNever;
  for (const TargetHealth& h : health_) {
    if (!h.probing) next = std::min(next, h.next_probe);
  }
  return next;
}

void HealthMonitor::report(std::size_t target, bool ok, std::vector<PoolChange>& changes) {
  TargetHealth& h = health_[target];
  const HealthCheckConfig& check = targets_[target].check;
  h.probing = false;
  ++h.probes;
  if (!ok) ++h.failures;
  // A result that agrees with the state ends any run against it.
  if (ok == h.up) {
    h.in_a_row = 0;
    return;
  }
  ++h.in_a_row;
  if (h.in_a_row < (h.up ? check.fall : check.rise)) return;
  h.up = ok;
  h.in_a_row = 0;
  ++h.transitions;
  settle(service_of_[target], changes);
}

void HealthMonitor::settle(std::size_t s, std::vector<PoolChange>& changes) {
  ServiceHealth& service = services_[s];
  bool every_down = true;
  for (std::size_t t = 0; t < targets_.size(); ++t) {
    if (service_of_[t] == s && health_[t].up) every_down = false;
  }
  if (every_down && !service.all_down) ++service.all_down_events;
  service.all_down = every_down;
  // Fail open: the pool stays as the data plane has it (the last backend to go down is still in it).
  if (every_down && service.all_down_policy == AllDown::fail_open) return;
  for (std::size_t t = 0; t < targets_.size(); ++t) {
    if (service_of_[t] != s || in_pool_[t] == health_[t].up) continue;
    in_pool_[t] = health_[t].up;
    changes.push_back({0, service.name, health_[t].up ? PoolAction::up : PoolAction::down, {targets_[t].backend}});
  }
}

}  // namespace flowtrack
