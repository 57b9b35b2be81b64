// The health checks' state machine (runtime/health_monitor.hpp) on a simulated clock: probes answered at
// once when their backend serves, at their timeout when it does not. A backend that stops is taken down
// within fall x interval + timeout and brought back within rise x interval; one flapping faster than
// `fall` probes sees no transition; every backend down keeps the last pool (fail_open) or empties it
// (drop), both counted; jitter spreads the probes within its bounds; a service with several VIPs is
// probed once per backend; a tunnel-mode service's backend is probed at the VIP, through its tunnel,
// and one that runs but does not serve the VIP goes down there while its NAT-mode probes pass.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "flowtrack/runtime/health_monitor.hpp"

namespace flowtrack {
namespace health_monitor_test {

constexpr Nanos kMs = kNanosPerMilli;

ServiceConfig checked_service(AllDown all_down = AllDown::fail_open, double jitter = 0) {
  ServiceConfig s{"web", to_network32(0x0a0a0164), to_network16(80), ipproto::kTcp, {}};
  for (std::uint32_t b = 1; b <= 3; ++b) s.backends.push_back({"b" + std::to_string(b), to_network32(0x0a0a020a + b), 0, b});
  HealthCheckConfig check;
  check.interval = 200 * kMs;
  check.timeout = 100 * kMs;
  check.fall = 3;
  check.rise = 2;
  check.jitter = jitter;
  check.all_down = all_down;
  s.health = check;
  return s;
}

struct Change {
  Nanos at;
  PoolChange change;
};

// Runs the monitor from 0 to `until` in 1 ms steps; `answers(probe, t)` says whether a probe of target
// `probe` started at t is answered (then it ends 1 ms later, else at its timeout).
std::vector<Change> simulate(HealthMonitor& monitor, Nanos until, const std::function<bool(const HealthTarget&, Nanos)>& answers) {
  std::multimap<Nanos, std::pair<std::size_t, bool>> results;  // when a started probe ends: (target, ok)
  std::vector<Change> out;
  std::vector<PoolChange> changes;
  for (Nanos t = 0; t <= until; t += kMs) {
    for (auto it = results.begin(); it != results.end() && it->first <= t; it = results.erase(it)) {
      changes.clear();
      monitor.report(it->second.first, it->second.second, changes);
      for (const PoolChange& c : changes) out.push_back({t, c});
    }
    monitor.start_due(t, [&](std::size_t target, const HealthTarget& h) {
      const bool ok = answers(h, t);
      results.emplace(t + (ok ? kMs : h.check.timeout), std::pair{target, ok});
    });
  }
  return out;
}

// The same where `serving(backend, t)` says whether a backend, by its name, answers at t whatever the probe.
std::vector<Change> simulate(HealthMonitor& monitor, Nanos until, const std::function<bool(const std::string&, Nanos)>& serving) {
  return simulate(monitor, until, [&](const HealthTarget& probe, Nanos t) { return serving(probe.backend, t); });
}

TEST(HealthMonitor, AStoppedBackendGoesDownWithinFallIntervalsAndComesBackWithinRise) {
  const std::vector<ServiceConfig> services = {checked_service()};
  HealthMonitor monitor(services, 0);
  ASSERT_EQ(monitor.targets().size(), 3u);
  constexpr Nanos kStop = 2003 * kMs, kRestart = 5007 * kMs;
  const auto changes = simulate(monitor, 8 * kNanosPerSecond, [](const std::string& backend, Nanos t) {
    return backend != "b2" || t < kStop || t >= kRestart;
  });
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].change.action, PoolAction::down);
  EXPECT_EQ(changes[0].change.backend.name, "b2");
  EXPECT_EQ(changes[0].change.service, "web");
  EXPECT_GT(changes[0].at, kStop);
  EXPECT_LE(changes[0].at, kStop + 3 * 200 * kMs + 100 * kMs);  // fall x interval + timeout
  EXPECT_EQ(changes[1].change.action, PoolAction::up);
  EXPECT_GT(changes[1].at, kRestart);
  EXPECT_LE(changes[1].at, kRestart + 2 * 200 * kMs + kMs);  // rise x interval, and the probe's own
  const TargetHealth& b2 = monitor.health()[1];
  EXPECT_TRUE(b2.up);
  EXPECT_EQ(b2.transitions, 2u);
  EXPECT_GE(b2.failures, 3u);
  EXPECT_EQ(monitor.health()[0].failures, 0u);
}

TEST(HealthMonitor, ATunnelModeBackendIsProbedAtTheVipThroughItsTunnelAndDownWhenItDoesNotServeIt) {
  // One pool in NAT mode and in IPIP: b2 runs (its own address answers) but does not hold the VIP.
  ServiceConfig nat = checked_service(), ipip = checked_service();
  ipip.name = "web-ipip";
  ipip.vip = to_network32(0x0a0a0165);
  ipip.tunnel.mode = ForwardMode::ipip;
  const std::vector<ServiceConfig> services = {nat, ipip};
  HealthMonitor monitor(services, 0);
  ASSERT_EQ(monitor.targets().size(), 6u);
  for (const HealthTarget& t : monitor.targets()) {
    EXPECT_EQ(t.destination(), t.service == "web" ? t.address : ipip.vip) << t.service << "/" << t.backend;
    EXPECT_EQ(t.tunnel.mode, t.service == "web" ? ForwardMode::nat : ForwardMode::ipip);
  }
  // A backend answers a probe at its own address, and one at the VIP when it holds the VIP.
  const auto changes = simulate(monitor, 2 * kNanosPerSecond, [&](const HealthTarget& probe, Nanos) {
    return probe.destination() == probe.address || (probe.destination() == ipip.vip && probe.backend != "b2");
  });
  // Down once its first probe (within the first interval) and two more have failed, each at its timeout.
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].change.service, "web-ipip");
  EXPECT_EQ(changes[0].change.backend.name, "b2");
  EXPECT_EQ(changes[0].change.action, PoolAction::down);
  EXPECT_LE(changes[0].at, 200 * kMs + 2 * 200 * kMs + 100 * kMs);
  for (std::size_t t = 0; t < monitor.targets().size(); ++t) {
    const HealthTarget& target = monitor.targets()[t];
    EXPECT_EQ(monitor.health()[t].up, target.service == "web" || target.backend != "b2") << target.service << "/" << target.backend;
  }
}

TEST(HealthMonitor, ABackendFlappingFasterThanFallMakesNoTransition) {
  const std::vector<ServiceConfig> services = {checked_service()};
  HealthMonitor monitor(services, 0);
  // Down 300 ms, up 300 ms, for 3 s: never three failed probes in a row at 200 ms.
  const auto changes = simulate(monitor, 3 * kNanosPerSecond, [](const std::string& backend, Nanos t) {
    return backend != "b2" || (t / (300 * kMs)) % 2 == 0;
  });
  EXPECT_LE(changes.size(), 3u);
  EXPECT_TRUE(changes.empty());
}

TEST(HealthMonitor, EveryBackendDownFailsOpenKeepingTheLastPool) {
  const std::vector<ServiceConfig> services = {checked_service(AllDown::fail_open)};
  HealthMonitor monitor(services, 0);
  // b1 stops at 1 s, b2 at 2 s, b3 at 3 s; b2 comes back at 5 s.
  const auto changes = simulate(monitor, 7 * kNanosPerSecond, [](const std::string& backend, Nanos t) {
    if (backend == "b1") return t < kNanosPerSecond;
    if (backend == "b2") return t < 2 * kNanosPerSecond || t >= 5 * kNanosPerSecond;
    return t < 3 * kNanosPerSecond;
  });
  // b1 and b2 leave the pool; b3, the last, stays in it (held back); when b2 is up again, it comes
  // back and the held b3 goes out.
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].change.backend.name, "b1");
  EXPECT_EQ(changes[1].change.backend.name, "b2");
  EXPECT_EQ(changes[2].change.backend.name, "b2");
  EXPECT_EQ(changes[2].change.action, PoolAction::up);
  EXPECT_EQ(changes[3].change.backend.name, "b3");
  EXPECT_EQ(changes[3].change.action, PoolAction::down);
  EXPECT_EQ(changes[2].at, changes[3].at);
  EXPECT_EQ(monitor.services()[0].all_down_events, 1u);
  EXPECT_FALSE(monitor.services()[0].all_down);
  EXPECT_FALSE(monitor.health()[2].up);
}

TEST(HealthMonitor, EveryBackendDownWithDropEmptiesThePool) {
  const std::vector<ServiceConfig> services = {checked_service(AllDown::drop)};
  HealthMonitor monitor(services, 0);
  const auto changes = simulate(monitor, 2 * kNanosPerSecond, [](const std::string&, Nanos t) { return t < 500 * kMs; });
  ASSERT_EQ(changes.size(), 3u);
  for (const Change& c : changes) EXPECT_EQ(c.change.action, PoolAction::down);
  EXPECT_TRUE(monitor.services()[0].all_down);
  EXPECT_EQ(monitor.services()[0].all_down_events, 1u);
}

TEST(HealthMonitor, JitterSpreadsTheProbesWithinItsBounds) {
  const std::vector<ServiceConfig> services = {checked_service(AllDown::fail_open, 0.25)};
  HealthMonitor monitor(services, 0, 42);
  std::map<std::size_t, std::vector<Nanos>> starts;
  std::vector<PoolChange> changes;
  for (Nanos t = 0; t <= 20 * kNanosPerSecond; t += kMs) {
    monitor.start_due(t, [&](std::size_t target, const HealthTarget&) {
      starts[target].push_back(t);
      monitor.report(target, true, changes);
    });
  }
  bool spread = false;
  for (const auto& [target, times] : starts) {
    for (std::size_t i = 1; i < times.size(); ++i) {
      const Nanos gap = times[i] - times[i - 1];
      EXPECT_GE(gap, 150 * kMs);
      EXPECT_LE(gap, 250 * kMs + kMs);  // the 1 ms step
      spread |= gap != times[1] - times[0];
    }
  }
  EXPECT_TRUE(spread);
  EXPECT_TRUE(changes.empty());
}

TEST(HealthMonitor, AServiceOnSeveralVipsIsProbedOncePerBackendAndUncheckedOnesNotAtAll) {
  ServiceConfig a = checked_service(), b = checked_service(), unchecked = checked_service();
  b.vip = to_network32(0x0a0a0165);
  unchecked.name = "other";
  unchecked.health.reset();
  const std::vector<ServiceConfig> services = {a, b, unchecked};
  HealthMonitor monitor(services, 0);
  EXPECT_EQ(monitor.targets().size(), 3u);
  EXPECT_EQ(monitor.services().size(), 1u);
  EXPECT_EQ(monitor.targets()[0].port, to_network16(80));  // the backend has none: the service's
  // Every first probe is due within the first interval; a probe in flight is not started again.
  std::size_t started = 0;
  monitor.start_due(200 * kMs, [&](std::size_t, const HealthTarget&) { ++started; });
  monitor.start_due(10 * kNanosPerSecond, [&](std::size_t, const HealthTarget&) { ++started; });
  EXPECT_EQ(started, 3u);
  EXPECT_EQ(monitor.next_due(), kNever);
}

}  // namespace health_monitor_test
}  // namespace flowtrack
