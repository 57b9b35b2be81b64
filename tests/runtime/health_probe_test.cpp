// The health checks' probes (runtime/health_probe.hpp) against servers on this host's loopback: a TCP
// probe passes on a listening port and fails on a closed one; an HTTP probe passes on the expected
// status and body and fails on another status, a missing body text, or a server that never answers
// (at its deadline); a tunnel-mode target is not probed outside its tunnel; and the answers' check
// (nf/health_answer.hpp) on its own.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <map>
#include <string>

#include "flowtrack/nf/health_answer.hpp"
#include "flowtrack/runtime/health_probe.hpp"
#include "support/loopback_server.hpp"

namespace flowtrack {
namespace health_probe_test {

using testing::LoopbackServer;

HealthTarget target(std::uint16_t port, HealthProbe probe, std::string body = "") {
  HealthTarget t{"web", "b1", htonl(INADDR_LOOPBACK), port, {}};
  t.check.probe = probe;
  t.check.body = std::move(body);
  return t;
}

// Runs each target's probe (id = its index) to its end; the results by id.
std::map<std::size_t, bool> probe(const std::vector<HealthTarget>& targets, Nanos timeout = 200 * kNanosPerMilli) {
  HealthProbes probes;
  const Nanos start = HealthProbes::steady_now();
  for (std::size_t i = 0; i < targets.size(); ++i) probes.start(i, targets[i], start + timeout);
  std::map<std::size_t, bool> results;
  while (probes.in_flight() != 0) {
    probes.wait(HealthProbes::steady_now() + timeout, [&](std::size_t id, bool passed) { results[id] = passed; });
  }
  return results;
}

TEST(HealthProbes, TcpPassesOnAListeningPortAndFailsOnAClosedOne) {
  std::uint16_t closed = 0;
  {
    LoopbackServer gone("x");
    closed = gone.port();
  }
  LoopbackServer open("x");
  const auto results = probe({target(open.port(), HealthProbe::tcp), target(closed, HealthProbe::tcp)});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results.at(0));
  EXPECT_FALSE(results.at(1));
}

TEST(HealthProbes, HttpPassesOnTheExpectedStatusAndBodyOnly) {
  LoopbackServer ok("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall good\n");
  LoopbackServer unavailable("HTTP/1.1 503 Service Unavailable\r\n\r\n");
  LoopbackServer silent("");
  const auto results = probe({target(ok.port(), HealthProbe::http), target(ok.port(), HealthProbe::http, "good"),
                              target(ok.port(), HealthProbe::http, "bad"), target(unavailable.port(), HealthProbe::http),
                              target(silent.port(), HealthProbe::http)});
  ASSERT_EQ(results.size(), 5u);
  EXPECT_TRUE(results.at(0));
  EXPECT_TRUE(results.at(1));
  EXPECT_FALSE(results.at(2));  // the body lacks the text
  EXPECT_FALSE(results.at(3));  // another status
  EXPECT_FALSE(results.at(4));  // no answer by the deadline
}

TEST(HealthProbes, ATunnelModeTargetIsNeverProbedOutsideItsTunnel) {
  // Its VIP answers on this host; without the probe tunnel the probe fails rather than ask the VIP
  // directly, which would prove nothing of the backend.
  LoopbackServer vip("x");
  HealthTarget t = target(vip.port(), HealthProbe::tcp);
  t.address = htonl(0x0a0a020c);
  t.vip = htonl(INADDR_LOOPBACK);
  t.tunnel.mode = ForwardMode::ipip;
  const auto results = probe({t});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results.at(0));
}

TEST(HealthAnswer, TheStatusLineAndTheBodyAfterTheHeaders) {
  HealthCheckConfig check;
  EXPECT_TRUE(http_answer_passes("HTTP/1.1 200 OK\r\n\r\n", check));
  EXPECT_TRUE(http_answer_passes("HTTP/1.0 200", check));
  EXPECT_FALSE(http_answer_passes("HTTP/1.1 2000 OK\r\n", check));
  EXPECT_FALSE(http_answer_passes("HTTP/2 200 OK\r\n", check));
  EXPECT_FALSE(http_answer_passes("HTTP/1.1 20", check));
  EXPECT_FALSE(http_answer_passes("", check));
  check.status = 204;
  EXPECT_TRUE(http_answer_passes("HTTP/1.1 204 No Content\r\n\r\n", check));
  check.status = 200;
  check.body = "ready";
  EXPECT_TRUE(http_answer_passes("HTTP/1.1 200 OK\r\n\r\nstatus: ready", check));
  EXPECT_FALSE(http_answer_passes("HTTP/1.1 200 OK\r\nX-State: ready\r\n\r\nstarting", check));  // a header is no body
  EXPECT_FALSE(http_answer_passes("HTTP/1.1 200 OK\r\nX-State: ready\r\n", check));
}

}  // namespace health_probe_test
}  // namespace flowtrack
