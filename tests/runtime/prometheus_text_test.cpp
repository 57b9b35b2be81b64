// The live counters as Prometheus text (runtime/prometheus_text.hpp): every family typed and described
// once, counters named _total, drops as one counter labelled by reason, the LB's backends labelled by
// name (and their live connections by phase), its VIPs' and backends' traffic, the health checks'
// states, label values escaped, and nothing but valid exposition lines.
#include "flowtrack/runtime/prometheus_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace flowtrack {
namespace {

LiveCounters lb_counters() {
  LiveCounters c;
  c.nf = "lb";
  c.packets_in = 1000;
  c.packets_to_function = 990;
  c.packets_out = 980;
  c.drops = {{"no_backend", 7}, {"not_ipv4", 3}};
  c.connections = 120;
  c.connections_live = 4;
  c.arp_answered = 2;
  c.arp_asked = 5;
  c.handed_off = 6;
  c.handoff_backoffs = 2;
  c.backends = {{"b1", 40}, {"b\"2\\", 80}};
  c.backend_connections = {{"b1", {0, 1, 774}}, {"b\"2\\", {2, 3, 0}}};
  c.over_rate = 9;
  c.traffic.vips = {{"10.10.1.100:80/tcp", {.packets = 500, .bytes = 40000, .reply_packets = 480, .reply_bytes = 900000,
                                            .connections = 120, .connections_live = 4}}};
  c.traffic.backends = {{"b1", {.packets = 200, .bytes = 16000, .connections = 40}}};
  c.vip_rate = {{"10.10.1.100:80/tcp", 12}};
  c.backend_health = {{"web/b1", {.up = false, .probes = 30, .failures = 3, .transitions = 1}}};
  c.all_down_events = {{"web", 0}};
  return c;
}

bool has_line(const std::string& text, const std::string& line) { return ("\n" + text).find("\n" + line + "\n") != std::string::npos; }

// Each series of lb_counters() with its value: the function's totals and gauges, the VIPs' and the
// backends' traffic, the health checks.
TEST(PrometheusText, EverySeriesCarriesItsValue) {
  const std::string text = prometheus_text(lb_counters());
  for (const char* line : {
           "flowtrack_info{nf=\"lb\"} 1",
           "flowtrack_packets_received_total 1000",
           "flowtrack_packets_to_function_total 990",
           "flowtrack_packets_sent_total 980",
           "flowtrack_connections_total 120",
           "flowtrack_connections 4",
           "flowtrack_arp_replies_sent_total 2",
           "flowtrack_arp_requests_sent_total 5",
           "flowtrack_packets_handed_off_total 6",
           "flowtrack_handoff_backoffs_total 2",
           "flowtrack_over_rate_total 9",
           "flowtrack_vip_packets_total{vip=\"10.10.1.100:80/tcp\"} 500",
           "flowtrack_vip_reply_bytes_total{vip=\"10.10.1.100:80/tcp\"} 900000",
           "flowtrack_vip_connections{vip=\"10.10.1.100:80/tcp\"} 4",
           "flowtrack_vip_new_connections_per_second{vip=\"10.10.1.100:80/tcp\"} 12",
           "flowtrack_backend_bytes_total{backend=\"b1\"} 16000",
           "flowtrack_backend_new_connections_per_second{backend=\"b1\"} 0",
           "flowtrack_backend_up{target=\"web/b1\"} 0",
           "flowtrack_health_probe_failures_total{target=\"web/b1\"} 3",
           "flowtrack_service_all_down_total{service=\"web\"} 0",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << " in\n" << text;
  }
}

TEST(PrometheusText, DropsAreOneCounterLabelledByReason) {
  const std::string text = prometheus_text(lb_counters());
  EXPECT_TRUE(has_line(text, "# TYPE flowtrack_drops_total counter"));
  EXPECT_TRUE(has_line(text, "flowtrack_drops_total{reason=\"no_backend\"} 7"));
  EXPECT_TRUE(has_line(text, "flowtrack_drops_total{reason=\"not_ipv4\"} 3"));
}

TEST(PrometheusText, BackendsAreLabelledByTheirEscapedNames) {
  const std::string text = prometheus_text(lb_counters());
  EXPECT_TRUE(has_line(text, "flowtrack_backend_connections_total{backend=\"b1\"} 40"));
  EXPECT_TRUE(has_line(text, "flowtrack_backend_connections_total{backend=\"b\\\"2\\\\\"} 80")) << text;
  LiveCounters nat = lb_counters();
  nat.nf = "nat";
  nat.backends.clear();
  nat.backend_connections.clear();
  nat.traffic = {};
  nat.backend_health.clear();
  EXPECT_EQ(prometheus_text(nat).find("flowtrack_backend"), std::string::npos);
}

// A backend's live connections are one gauge per phase: the closing ones (TIME_WAIT) apart from the
// established.
TEST(PrometheusText, BackendConnectionsAreAGaugeByPhase) {
  const std::string text = prometheus_text(lb_counters());
  EXPECT_TRUE(has_line(text, "# TYPE flowtrack_backend_connections gauge"));
  EXPECT_TRUE(has_line(text, "flowtrack_backend_connections{backend=\"b1\",phase=\"opening\"} 0"));
  EXPECT_TRUE(has_line(text, "flowtrack_backend_connections{backend=\"b1\",phase=\"established\"} 1"));
  EXPECT_TRUE(has_line(text, "flowtrack_backend_connections{backend=\"b1\",phase=\"closing\"} 774"));
  EXPECT_TRUE(has_line(text, "flowtrack_backend_connections{backend=\"b\\\"2\\\\\",phase=\"opening\"} 2")) << text;
}

// Every line is a comment (HELP or TYPE) or a sample of the family last typed; each family is typed
// once, as a counter when its name ends in _total and as a gauge otherwise. Returns the families.
std::set<std::string> expect_valid_exposition(const std::string& text) {
  std::set<std::string> typed;
  EXPECT_FALSE(text.empty());
  if (text.empty()) return typed;
  EXPECT_EQ(text.back(), '\n');
  const std::regex help(R"(# HELP ([a-z_]+) \S.*)");
  const std::regex type(R"(# TYPE ([a-z_]+) (counter|gauge))");
  const std::string label = R"([a-z_]+="(?:[^"\\\n]|\\["\\n])*")";  // name="value", the value escaped
  const std::regex sample("([a-z_]+)(\\{" + label + "(," + label + ")*\\})? [0-9]+");
  std::istringstream lines(text);
  std::string family;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, help)) continue;
    if (std::regex_match(line, m, type)) {
      family = m[1];
      EXPECT_TRUE(typed.insert(family).second) << "typed twice: " << family;
      EXPECT_EQ(family.ends_with("_total"), m[2] == "counter") << line;
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, m, sample)) << "not exposition: " << line;
    EXPECT_EQ(m[1], family) << line;
  }
  return typed;
}

TEST(PrometheusText, EveryLineIsValidExposition) { EXPECT_EQ(expect_valid_exposition(prometheus_text(lb_counters())).size(), 31u); }

// A NAT pair's figures: its role as a gauge, the sync link's counts, its refusals labelled by reason;
// none without a pair.
TEST(PrometheusText, ANatPairsFiguresAreSeriesOfTheirOwn) {
  LiveCounters c;
  c.nf = "nat";
  c.pair = {.role = "standby", .messages_sent = 11, .messages_received = 40, .messages_acked = 0, .messages_resent = 0,
            .events_sent = 0, .events_applied = 75, .events_lost = 0, .resyncs = 0, .takeovers = 1,
            .refused = {{"forged", 2}, {"replayed", 3}}};
  const std::string text = prometheus_text(c);
  for (const char* line : {"flowtrack_pair_active 0", "flowtrack_pair_messages_sent_total 11", "flowtrack_pair_messages_received_total 40",
                           "flowtrack_pair_events_applied_total 75", "flowtrack_pair_takeovers_total 1",
                           "flowtrack_pair_refused_total{reason=\"forged\"} 2", "flowtrack_pair_refused_total{reason=\"replayed\"} 3"}) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  const std::set<std::string> families = expect_valid_exposition(text);
  EXPECT_EQ(std::ranges::count_if(families, [](const std::string& f) { return f.starts_with("flowtrack_pair_"); }), 11);
  c.pair.role = "active";
  EXPECT_TRUE(has_line(prometheus_text(c), "flowtrack_pair_active 1"));
  c.pair = {};
  EXPECT_EQ(prometheus_text(c).find("flowtrack_pair_"), std::string::npos);
}

}  // namespace
}  // namespace flowtrack
