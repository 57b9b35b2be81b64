// The simulator: conservation, determinism per seed, the paper's capacity check of its rate sets, and the
// paper's orderings of LAPS against its baselines on a small overload scenario (behaviour only; the
// figures come from `flowtrack sim sched`).
#include <gtest/gtest.h>

#include <array>
#include <utility>
#include <vector>

#include "flowtrack/sched/simulator.hpp"
#include "sched_fixtures.hpp"

namespace flowtrack {
namespace {

std::vector<HeaderTrace> four_traces() {
  std::vector<HeaderTrace> traces;
  for (std::uint64_t s = 0; s < 4; ++s) {
    traces.push_back(testing::zipf_headers({.flows = 5'000, .packets = 40'000, .exponent = 1.0, .seed = 10 + s}));
  }
  return traces;
}

SimConfig small_config(int rate_set, std::uint64_t seed = 1) {
  SimConfig config;
  config.rates = paper_rate_set(rate_set);
  config.duration = 20 * kPicosPerMilli;
  config.seed = seed;
  return config;
}

bool same(const SimResult& a, const SimResult& b) {
  return a.offered == b.offered && a.delivered == b.delivered && a.dropped == b.dropped &&
         a.out_of_order == b.out_of_order && a.migrations == b.migrations && a.core_moves == b.core_moves &&
         a.service_switches == b.service_switches && a.flow_moves == b.flow_moves;
}

TEST(Simulator, EveryArrivalIsDeliveredOrDropped) {
  const auto traces = four_traces();
  for (const char* policy : {"laps", "afs", "fcfs", "rss"}) {
    const SimResult r = simulate(small_config(2), traces, policy);
    EXPECT_GT(r.offered, 50'000u) << policy;
    EXPECT_EQ(r.offered, r.delivered + r.dropped) << policy;
    EXPECT_LE(r.out_of_order, r.delivered) << policy;
  }
}

TEST(Simulator, SameSeedSameResultOtherSeedOtherArrivals) {
  const auto traces = four_traces();
  const SimResult a = simulate(small_config(2, 7), traces, "laps");
  const SimResult b = simulate(small_config(2, 7), traces, "laps");
  const SimResult c = simulate(small_config(2, 8), traces, "laps");
  EXPECT_TRUE(same(a, b));
  EXPECT_FALSE(same(a, c));
}

// The simulator's speed work must not change what it computes: one seed's every metric, per policy, as
// the simulator before that work (commit 71aad2f) gave them.
TEST(Simulator, SpeedWorkKeepsEachPolicysMetricsForASeed) {
  // offered, delivered, dropped, out of order, migrations, core moves, service switches, flow moves
  using Metrics = std::array<std::uint64_t, 8>;
  const std::pair<const char*, Metrics> pinned[] = {
      {"laps", {90699, 75178, 15521, 2080, 868, 88, 46, 9535}},
      {"afs", {90699, 29299, 61400, 15, 52, 0, 20043, 26}},
      {"fcfs", {90699, 26900, 63799, 2166, 0, 0, 19552, 18646}},
      {"rss", {90699, 29521, 61178, 0, 0, 0, 20036, 0}},
  };
  const auto traces = four_traces();
  for (const auto& [policy, metrics] : pinned) {
    const SimResult r = simulate(small_config(2, 7), traces, policy);
    const Metrics now{r.offered, r.delivered, r.dropped, r.out_of_order, r.migrations, r.core_moves, r.service_switches, r.flow_moves};
    EXPECT_EQ(now, metrics) << policy;
  }
}

TEST(Simulator, OfferedLoadFollowsTheRateModel) {
  // Set 1 at t = 0: 1 + 1.8 + 0.5 + 0.3 = 3.6 Mpps, with noise and a 20 ms window.
  const SimResult r = simulate(small_config(1), four_traces(), "rss");
  EXPECT_NEAR(r.offered_mpps(), 3.6, 0.5);
}

TEST(Simulator, PaperRateSetsAreUnderAndOverTheSixteenCoreCapacity) {
  // Core-equivalents needed at t = 0 without penalties: sum of rate x processing time.
  auto cores_needed = [](int set, unsigned bytes) {
    double cores = 0;
    const auto rates = paper_rate_set(set);
    for (std::size_t s = 0; s < rates.size(); ++s) {
      cores += expected_rate_mpps(rates[s], 0) * picos_to_seconds(processing_time(paper_services()[s], bytes)) * 1e6;
    }
    return cores;
  };
  EXPECT_NEAR(cores_needed(1, 64), 8.4, 0.1);
  EXPECT_NEAR(cores_needed(1, 1500), 15.0, 0.1);
  EXPECT_NEAR(cores_needed(2, 700), 19.2, 0.1);
  EXPECT_LT(cores_needed(1, 700), 16);
  EXPECT_GT(cores_needed(2, 700), 16);
}

TEST(Simulator, LapsKeepsThePapersOrderingUnderOverload) {
  const auto traces = four_traces();
  const SimConfig config = small_config(2);
  const SimResult laps = simulate(config, traces, "laps");
  const SimResult afs = simulate(config, traces, "afs");
  const SimResult fcfs = simulate(config, traces, "fcfs");
  SimConfig ideal_config = config;
  ideal_config.penalties = {0, 0};
  const SimResult ideal = simulate(ideal_config, traces, "laps");

  EXPECT_LT(laps.dropped, afs.dropped);
  EXPECT_LT(laps.dropped, fcfs.dropped);
  EXPECT_LT(laps.out_of_order, fcfs.out_of_order);
  // Dedicated cores keep instruction caches warm; shared ones switch programs most of the time.
  EXPECT_LT(laps.service_switches * 10, fcfs.service_switches);
  EXPECT_LT(laps.service_switches * 10, afs.service_switches);
  EXPECT_GE(ideal.delivered, laps.delivered);
  EXPECT_GT(laps.delivered, afs.delivered);
  EXPECT_GT(laps.delivered, fcfs.delivered);
  EXPECT_LT(laps.migrations, afs.migrations + laps.delivered);  // sanity: counters are filled
}

TEST(Simulator, MigrationCensusCountsTheFlowsOnEveryCoreAFlowLeaves) {
  SimConfig config = small_config(2);
  config.migration_census = true;
  const SimResult r = simulate(config, four_traces(), "laps");
  ASSERT_EQ(r.flows_at_migration.size(), config.queue_capacity + 2);
  std::uint64_t censuses = 0, aggressive_censuses = 0;
  for (std::size_t n = 0; n < r.flows_at_migration.size(); ++n) {
    censuses += r.flows_at_migration[n];
    aggressive_censuses += r.aggressive_at_migration[n];
  }
  EXPECT_GT(r.migrations, 0u);
  EXPECT_EQ(censuses, r.migrations);
  EXPECT_EQ(aggressive_censuses, r.migrations);
  // A core a flow leaves is overloaded: it holds at least one flow, and the migrating flow (aggressive)
  // unless its packets there were all served.
  EXPECT_EQ(r.flows_at_migration[0], 0u);
  // Without the census the result carries no histograms and the same metrics.
  config.migration_census = false;
  const SimResult plain = simulate(config, four_traces(), "laps");
  EXPECT_TRUE(plain.flows_at_migration.empty());
  EXPECT_EQ(plain.migrations, r.migrations);
  EXPECT_EQ(plain.out_of_order, r.out_of_order);
}

TEST(Simulator, TimelineCountsEveryCoreOfEveryService) {
  SimConfig config = small_config(2);
  config.timeline_step = 5 * kPicosPerMilli;
  const SimResult r = simulate(config, four_traces(), "laps");
  ASSERT_EQ(r.timeline.size(), 4u);
  for (const auto& point : r.timeline) {
    unsigned cores = 0;
    for (unsigned c : point.cores) cores += c;
    EXPECT_EQ(cores, 16u);
    EXPECT_EQ(point.offered_mpps.size(), 4u);
  }
}

TEST(Simulator, RefusesBadConfigurations) {
  const auto traces = four_traces();
  SimConfig config = small_config(2);
  EXPECT_THROW(simulate(config, traces, "nope"), std::invalid_argument);
  EXPECT_THROW(simulate(config, {}, "laps"), std::invalid_argument);
  config.rates.pop_back();
  EXPECT_THROW(simulate(config, traces, "laps"), std::invalid_argument);
  config = small_config(2);
  config.queue_capacity = 0;
  EXPECT_THROW(simulate(config, traces, "laps"), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
