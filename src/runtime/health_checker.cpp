#include "flowtrack/runtime/health_checker.hpp"

#include <algorithm>

namespace flowtrack {

HealthChecker::HealthChecker(std::span<const ServiceConfig> services, OnChange on_change, std::uint64_t seed)
    : monitor_(services, HealthProbes::steady_now(), seed), on_change_(std::move(on_change)), thread_([this] { run(); }) {}

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
  HealthProbes probes;
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
