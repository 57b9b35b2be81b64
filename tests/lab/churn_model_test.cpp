// The churn simulation's model (flowtrack/lab/churn_model.hpp): small cases worked by hand, and the
// published experiment's ordering of the designs on a synthetic workload.
#include "flowtrack/lab/churn_model.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <stdexcept>

#include "flowtrack/nf/maglev.hpp"

namespace flowtrack::lab {
namespace {

using Kind = ChurnEvent::Kind;
constexpr std::uint32_t kSize = 307;  // prime, 100 entries a backend for three

// The backend number Maglev gives `hash` among backends b<live...> (each weight 1, table of kSize).
std::uint32_t maglev_choice(const std::vector<std::uint32_t>& live, std::uint32_t hash) {
  std::vector<MaglevTable::Backend> named;
  for (const std::uint32_t b : live) named.push_back({fmt::format("b{}", b), 1});
  MaglevTable table(kSize);
  table.populate(named);
  return live[table.lookup(hash)];
}

// The first flow hash that Maglev gives `before` among b0..b2 and `after` once b2 has left.
std::uint32_t flow_on(std::uint32_t before, std::uint32_t after) {
  for (std::uint32_t h = 0;; ++h) {
    if (maglev_choice({0, 1, 2}, h) == before && maglev_choice({0, 1}, h) == after) return h;
  }
}

std::map<ChurnDesign, std::uint64_t> broken_by_design(const ChurnScenario& s) {
  std::map<ChurnDesign, std::uint64_t> broken;
  for (const ChurnDesign d : kChurnDesigns) broken[d] = broken_connections(s, d);
  return broken;
}

TEST(ChurnModel, PlainHashRemapsByTheModuloOfTheLiveBackends) {
  ChurnScenario s;
  s.instances = 1;
  s.backends = 3;
  s.maglev_size = kSize;
  // Flow hash 4: 4 mod 3 = 1 (b1), then 4 mod 2 = 0 (b0): broken. 3: b0, then b1: broken. 6: b0, then b0.
  // The fourth ended before b2 left.
  s.connections = {{0, 10, 4, 0}, {0, 10, 3, 0}, {0, 10, 6, 0}, {0, 4, 4, 0}};
  s.events = {{5, Kind::backend_leaves, 2}};
  EXPECT_EQ(broken_connections(s, ChurnDesign::hash), 2u);
}

TEST(ChurnModel, AMovedConnectionSurvivesWhereItsInstanceKnewItOrTheExceptionHadArrived) {
  ChurnScenario s;
  s.instances = 2;
  s.backends = 3;
  s.maglev_size = kSize;
  s.sync_delay = 0.1;
  constexpr std::uint32_t kOnInstance1 = 0xc0000000;  // hash-threshold: the upper half goes to instance 1 of 2
  const std::uint32_t on_b2 = flow_on(2, 0);          // moves to b0 once b2 drains away
  const std::uint32_t on_b0 = flow_on(0, 0);          // stays on b0
  s.connections = {{0, 10, on_b2, kOnInstance1}, {0, 10, on_b0, kOnInstance1}};
  // b2 drains at 5 s; instance 1 stops 50 ms later, before the exception has reached instance 0.
  s.events = {{5, Kind::backend_leaves, 2}, {5.05, Kind::instance_leaves, 1}};
  auto broken = broken_by_design(s);
  EXPECT_EQ(broken[ChurnDesign::maglev], 1u);        // b2's connection remapped at 5 s, by every instance
  EXPECT_EQ(broken[ChurnDesign::beamer], 0u);        // b2 is its entry's previous backend: passed back to it
  EXPECT_EQ(broken[ChurnDesign::maglev_local], 1u);  // instance 0 never saw it, and Maglev says b0
  EXPECT_EQ(broken[ChurnDesign::flowtrack], 1u);     // the exception was 50 ms short of instance 0
  // The exception in 10 ms: it has arrived when the connection moves.
  s.sync_delay = 0.01;
  EXPECT_EQ(broken_connections(s, ChurnDesign::flowtrack), 0u);
  // Without the drain, only the instance changes: no stateful design breaks anything.
  s.events = {{5.05, Kind::instance_leaves, 1}};
  broken = broken_by_design(s);
  EXPECT_EQ(broken[ChurnDesign::maglev_local], 0u);
  EXPECT_EQ(broken[ChurnDesign::flowtrack], 0u);
  EXPECT_EQ(broken[ChurnDesign::hash], 0u);  // the pool did not change: the stateless ones never notice
}

TEST(ChurnModel, BeamerLivesThroughOneChangeOfItsEntryNotTwo) {
  ChurnScenario s;
  s.instances = 1;
  s.backends = 3;
  s.maglev_size = kSize;
  const std::uint32_t flow = flow_on(2, 0);
  s.connections = {{0, 10, flow, 0}};
  // b2 leaves (its entry goes to b0, b2 its previous backend), then b0 leaves (the entry's previous is b0).
  s.events = {{5, Kind::backend_leaves, 2}, {6, Kind::backend_leaves, 0}};
  EXPECT_EQ(broken_connections(s, ChurnDesign::beamer), 1u);
  s.events.pop_back();
  EXPECT_EQ(broken_connections(s, ChurnDesign::beamer), 0u);
}

TEST(ChurnModel, TheDesignsBreakConnectionsInThePublishedOrder) {
  ChurnWorkload w;
  w.instances = 8;
  w.backends = 8;
  w.seconds = 300;
  w.arrivals_per_second = 40;
  w.backend_every = 20;
  w.instance_every = 25;
  w.mean_duration = 60;
  ChurnScenario s = churn_scenario(w);
  s.sync_delay = 0.1;
  const auto broken = broken_by_design(s);
  // Plain hash > consistent hash > Beamer > flowtrack (Cheetah's run: ~997, ~715, ~51, 0 for Cheetah).
  EXPECT_GT(broken.at(ChurnDesign::hash), broken.at(ChurnDesign::maglev));
  EXPECT_GT(broken.at(ChurnDesign::maglev), broken.at(ChurnDesign::beamer));
  EXPECT_GT(broken.at(ChurnDesign::beamer), broken.at(ChurnDesign::flowtrack));
  // Sharing the exceptions can only save connections; Maglev's own state saves most of what it loses.
  EXPECT_LE(broken.at(ChurnDesign::flowtrack), broken.at(ChurnDesign::maglev_local));
  EXPECT_LT(broken.at(ChurnDesign::maglev_local), broken.at(ChurnDesign::maglev));
  // A resilient next-hop group moves fewer connections between instances than hash-threshold.
  s.resilient_ecmp = true;
  EXPECT_LE(broken_connections(s, ChurnDesign::maglev_local), broken.at(ChurnDesign::maglev_local));
}

TEST(ChurnModel, AnEventThatCannotHappenIsRefused) {
  ChurnScenario s;
  s.instances = 2;
  s.backends = 3;
  s.maglev_size = kSize;
  s.events = {{1, Kind::backend_joins, 1}};  // b1 is live
  EXPECT_THROW(broken_connections(s, ChurnDesign::hash), std::invalid_argument);
  s.events = {{1, Kind::instance_leaves, 1}, {2, Kind::instance_leaves, 0}};  // the last instance
  EXPECT_THROW(broken_connections(s, ChurnDesign::hash), std::invalid_argument);
  s.events = {{1, Kind::backend_leaves, 7}};  // no such backend
  EXPECT_THROW(broken_connections(s, ChurnDesign::hash), std::invalid_argument);
  s.events = {};
  s.maglev_size = 299;  // under 100 entries a backend
  EXPECT_THROW(broken_connections(s, ChurnDesign::hash), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack::lab
