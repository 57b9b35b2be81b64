#include "flowtrack/runtime/health_checker.hpp"

#include <algorithm>

namespace flowtrack {
namespace {

// The probe tunnel into the VIPs of the tunnel-mode targets, or none when there is none.
std::unique_ptr<ProbeTunnel> tunnel_for(std::span<const HealthTarget> targets) {
  std::vector<std::uint32_t> vips;
  for (const HealthTarget& t : targets) {
    if (t.tunnel.tunnels() && std::ranges::find(vips, t.vip) == vips.end()) vips.push_back(t.vip);
  }
  return vips.empty() ? nullptr : std::make_unique<ProbeTunnel>(vips);
}

}  // namespace

HealthChecker::HealthChecker(std::span<const ServiceConfig> services, OnChange on_change, std::uint64_t seed)
    : monitor_(services, HealthProbes::steady_now(), seed),
      tunnel_(tunnel_for(monitor_.targets())),
      on_change_(std::move(on_change)),
      thread_([this] { run(); }) {}

HealthChecker::~HealthChecker() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

HealthSnapshot HealthChecker::snapshot() const {
  const std::lock_guard lock(mutex_);
  return {{monitor_.targets().begin(), monitor_.targets().end()},
          {monitor_.health().begin(), monitor_.health().end()},
          {monitor_.services().begin(), monitor_.services().end()}};
}

void HealthChecker::run() {
  // Every wait ends within this, so that a stop is seen soon.
  constexpr Nanos kLongestWait = 100 * kNanosPerMilli;
  HealthProbes probes(tunnel_.get());
  std::vector<PoolChange> changes;
  while (!stop_.load(std::memory_order_relaxed)) {
    const Nanos now = HealthProbes::steady_now();
    {
      const std::lock_guard lock(mutex_);
      monitor_.start_due(now, [&](std::size_t target, const HealthTarget& t) { probes.start(target, t, now + t.check.timeout); });
    }
    const Nanos until = std::min(monitor_.next_due(), now + kLongestWait);
    probes.wait(until, [&](std::size_t target, bool passed) {
      changes.clear();
      {
        const std::lock_guard lock(mutex_);
        monitor_.report(target, passed, changes);
      }
      for (const PoolChange& change : changes) on_change_(change);
    });
  }
}

}  // namespace flowtrack
