// The live counters' sum and JSON (runtime/live_counters.hpp): workers' counters add up, a sum started
// empty takes their function's name, the control plane's views (health states, rates) are not summed,
// and the JSON of `ctl counters` holds the load balancers' per-VIP and per-backend figures and the
// health checks' states.
#include "flowtrack/runtime/live_counters.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace flowtrack {
namespace live_counters_test {

LiveCounters worker(std::uint64_t packets) {
  LiveCounters c;
  c.nf = "lb";
  c.packets_in = packets;
  c.over_rate = packets / 10;
  c.traffic.vips["10.10.1.100:80/tcp"] = {.packets = packets, .bytes = 100 * packets, .connections = 2, .connections_live = 1};
  c.traffic.backends["b1"] = {.packets = packets, .bytes = 100 * packets, .connections = 2, .connections_live = 1};
  return c;
}

TEST(LiveCounters, WorkersAddUpUnderTheirFunctionsName) {
  LiveCounters sum;
  sum += worker(10);
  sum += worker(30);
  EXPECT_EQ(sum.nf, "lb");
  EXPECT_EQ(sum.packets_in, 40u);
  EXPECT_EQ(sum.over_rate, 4u);
  const LbTraffic& vip = sum.traffic.vips.at("10.10.1.100:80/tcp");
  EXPECT_EQ(vip.packets, 40u);
  EXPECT_EQ(vip.bytes, 4000u);
  EXPECT_EQ(vip.connections, 4u);
  EXPECT_EQ(vip.connections_live, 2u);
  EXPECT_EQ(sum.traffic.backends.at("b1"), vip);
}

TEST(LiveCounters, TheJsonHoldsTheVipsTheBackendsAndTheHealthChecks) {
  LiveCounters c = worker(10);
  c.vip_rate["10.10.1.100:80/tcp"] = 7;
  c.backend_health["web/b1"] = {.up = false, .probes = 12, .failures = 4, .transitions = 1};
  c.all_down_events["web"] = 1;
  const nlohmann::json j = nlohmann::json::parse(live_counters_json(c));
  EXPECT_EQ(j["over_rate"], 1);
  const nlohmann::json& vip = j["vips"]["10.10.1.100:80/tcp"];
  EXPECT_EQ(vip["packets"], 10);
  EXPECT_EQ(vip["bytes"], 1000);
  EXPECT_EQ(vip["reply_packets"], 0);
  EXPECT_EQ(vip["connections"], 2);
  EXPECT_EQ(vip["connections_live"], 1);
  EXPECT_EQ(vip["connections_per_second"], 7);
  EXPECT_EQ(j["backend_traffic"]["b1"]["connections_per_second"], 0);  // no rate yet
  EXPECT_EQ(j["backend_health"]["web/b1"]["state"], "down");
  EXPECT_EQ(j["backend_health"]["web/b1"]["failures"], 4);
  EXPECT_EQ(j["all_down_events"]["web"], 1);
  // A function without backends has neither.
  LiveCounters nat;
  nat.nf = "nat";
  const nlohmann::json n = nlohmann::json::parse(live_counters_json(nat));
  EXPECT_FALSE(n.contains("vips"));
  EXPECT_FALSE(n.contains("backend_health"));
  EXPECT_FALSE(n.contains("pair"));
}

// A NAT pair's figures are the control plane's: a sum of workers keeps them, and the JSON holds them
// with the refusals by reason.
TEST(LiveCounters, ANatPairsFiguresAreTheControlPlanesAndInTheJson) {
  LiveCounters sum;
  sum.pair = {.role = "active", .messages_sent = 9, .messages_received = 8, .messages_acked = 7, .messages_resent = 1,
              .events_sent = 30, .events_applied = 0, .events_lost = 0, .resyncs = 1, .takeovers = 1, .refused = {{"forged", 1}}};
  const LiveCounters::PairFigures before = sum.pair;
  LiveCounters w;
  w.pair.role = "standby";
  w.pair.messages_sent = 100;
  sum += w;
  EXPECT_EQ(sum.pair, before);
  const nlohmann::json j = nlohmann::json::parse(live_counters_json(sum));
  EXPECT_EQ(j["pair"]["role"], "active");
  EXPECT_EQ(j["pair"]["messages_acked"], 7);
  EXPECT_EQ(j["pair"]["events_sent"], 30);
  EXPECT_EQ(j["pair"]["takeovers"], 1);
  EXPECT_EQ(j["pair"]["refused"]["forged"], 1);
}

}  // namespace live_counters_test
}  // namespace flowtrack
