// The health checker's thread (runtime/health_checker.hpp) against servers on the loopback: a backend
// whose server stops is reported down through the callback, and up once it serves again; snapshots
// taken meanwhile from another thread see the states (ThreadSanitizer watches the two threads). The
// waits end on the callback's changes, not on a time: the bound is only there to end a broken run.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "flowtrack/runtime/health_checker.hpp"
#include "support/loopback_server.hpp"

namespace flowtrack {
namespace health_checker_test {

using testing::LoopbackServer;

class Changes {
 public:
  void add(const PoolChange& c) {
    const std::lock_guard lock(mutex_);
    seen_.push_back(c);
    changed_.notify_all();
  }
  // Waits for the nth change (0: the first); false if it does not come.
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return seen_.size() > n; });
  }
  PoolChange at(std::size_t n) {
    const std::lock_guard lock(mutex_);
    return seen_.at(n);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<PoolChange> seen_;
};

TEST(HealthChecker, ReportsABackendThatStopsDownAndUpAgainWhenItServes) {
  LoopbackServer b1("HTTP/1.0 200 OK\r\n\r\nok");
  auto b2 = std::make_unique<LoopbackServer>("HTTP/1.0 200 OK\r\n\r\nok");
  const std::uint16_t b2_port = b2->port();
  ServiceConfig service{"web", to_network32(0x0a0a0164), to_network16(80), ipproto::kTcp, {}};
  service.backends = {{"b1", htonl(INADDR_LOOPBACK), b1.port(), 1}, {"b2", htonl(INADDR_LOOPBACK), b2_port, 1}};
  HealthCheckConfig check;
  check.probe = HealthProbe::http;
  check.body = "ok";
  check.interval = 20 * kNanosPerMilli;
  check.timeout = 20 * kNanosPerMilli;
  check.fall = 2;
  check.rise = 2;
  service.health = check;
  const std::vector<ServiceConfig> services = {service};
  Changes changes;
  HealthChecker checker(services, [&](const PoolChange& c) { changes.add(c); });

  b2.reset();  // its server stops
  ASSERT_TRUE(changes.wait_for(0));
  EXPECT_EQ(changes.at(0).action, PoolAction::down);
  EXPECT_EQ(changes.at(0).backend.name, "b2");
  const HealthSnapshot down = checker.snapshot();
  ASSERT_EQ(down.health.size(), 2u);
  EXPECT_TRUE(down.health[0].up);
  EXPECT_FALSE(down.health[1].up);

  b2 = std::make_unique<LoopbackServer>("HTTP/1.0 200 OK\r\n\r\nok", b2_port);  // and serves again
  ASSERT_TRUE(changes.wait_for(1));
  EXPECT_EQ(changes.at(1).action, PoolAction::up);
  EXPECT_EQ(changes.at(1).backend.name, "b2");
  EXPECT_EQ(checker.snapshot().health[1].transitions, 2u);
}

}  // namespace health_checker_test
}  // namespace flowtrack
