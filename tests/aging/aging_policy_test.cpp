// The behaviour every aging policy owes the tracker, checked for each policy over real flow tables.
#include <gtest/gtest.h>

#include "aging/aging_rig.hpp"

namespace flowtrack::testing {
namespace {

static_assert(AgingPolicy<TimerWheel>);
static_assert(AgingPolicy<HeapAging>);
static_assert(AgingPolicy<ScanAging<ChainedTable<FlowKeyV4>>>);
static_assert(AgingPolicy<ScanAging<RobinHoodTable<FlowKeyV6>>>);
static_assert(AgingPolicy<LazyAging<CuckooPPTable<FlowKeyV4>>>);

constexpr Nanos kTick = kNanosPerMilli;
constexpr Nanos kTimeout = 100 * kTick;
constexpr std::size_t kCapacity = 2048;
constexpr std::size_t kFlows = 1536;

template <class S>
class AgingPolicyTest : public ::testing::Test {
 protected:
  AgingRig<S> rig{kCapacity, kTick, kTimeout};

  // Starts flows [first, first + count), spread over the ticks of `over`, and returns their ids.
  std::vector<FlowId> start_flows(std::uint64_t first, std::size_t count, Nanos over = 0) {
    std::vector<FlowId> ids;
    const std::size_t per_tick = over == 0 ? count : (count * kTick + over - 1) / over;
    for (std::size_t i = 0; i < count; ++i) {
      if (i > 0 && i % per_tick == 0) rig.run_for(kTick);
      const auto id = rig.packet(first + i);
      EXPECT_TRUE(id.has_value()) << "table full at flow " << i;
      if (id) ids.push_back(*id);
    }
    return ids;
  }

  // Long enough after the last packet for every policy to have reported every idle flow.
  Nanos drain_time() const { return kTimeout + rig.lateness_bound() + kTick; }
};

using Setups = ::testing::Types<
    Setup<WheelMaker, ChainedTable<FlowKeyV4>>, Setup<WheelMaker, RobinHoodTable<FlowKeyV6>>,
    Setup<HeapMaker, ChainedTable<FlowKeyV4>>, Setup<HeapMaker, CuckooTable<FlowKeyV4>>,
    Setup<ScanMaker, ChainedTable<FlowKeyV4>>, Setup<ScanMaker, RobinHoodTable<FlowKeyV4>>,
    Setup<ScanMaker, CuckooTable<FlowKeyV6>>, Setup<LazyMaker, FineCuckooPP<FlowKeyV4>>,
    Setup<LazyMaker, FineCuckooPP<FlowKeyV6>>>;

struct SetupName {
  template <class S>
  static std::string GetName(int) {
    return std::string(S::Policy::kName) + "_" + std::string(S::Table::kName) +
           (std::is_same_v<typename S::Table::key_type, FlowKeyV4> ? "_v4" : "_v6");
  }
};
TYPED_TEST_SUITE(AgingPolicyTest, Setups, SetupName);

TYPED_TEST(AgingPolicyTest, IdleFlowsLeaveTheTableEmptyOnTime) {
  auto& rig = this->rig;
  const std::vector<FlowId> ids = this->start_flows(0, kFlows, kTimeout / 2);
  ASSERT_EQ(rig.table.size(), kFlows);

  rig.run_for(this->drain_time());
  EXPECT_EQ(rig.table.size(), 0u);
  for (const FlowId id : ids) EXPECT_EQ(rig.expiries(id), 1u) << "flow " << id;
  EXPECT_LE(rig.max_lateness(), rig.lateness_bound());
}

TYPED_TEST(AgingPolicyTest, FlowsWithTrafficNeverExpire) {
  auto& rig = this->rig;
  const std::vector<FlowId> active = this->start_flows(0, kFlows / 2, kTimeout / 2);
  const std::vector<FlowId> idle = this->start_flows(kFlows, kFlows / 2);

  // Every active flow sees a packet every half timeout, for many timeouts; the idle ones none.
  for (int round = 0; round < 40; ++round) {
    for (std::size_t i = 0; i < active.size(); ++i) ASSERT_EQ(rig.packet(i), active[i]);
    rig.run_for(kTimeout / 2);
  }
  for (const FlowId id : active) EXPECT_EQ(rig.expiries(id), 0u) << "active flow " << id << " expired";
  for (const FlowId id : idle) EXPECT_EQ(rig.expiries(id), 1u) << "idle flow " << id;
  EXPECT_EQ(rig.table.size(), active.size());

  rig.run_for(this->drain_time());
  EXPECT_EQ(rig.table.size(), 0u);
  EXPECT_EQ(rig.total_expiries(), kFlows);
  EXPECT_LE(rig.max_lateness(), rig.lateness_bound());
}

TYPED_TEST(AgingPolicyTest, BudgetedAdvanceNeverLosesAnExpiry) {
  auto& rig = this->rig;
  this->start_flows(0, kFlows, kTimeout / 4);
  rig.clock.advance(this->drain_time());

  constexpr std::size_t kBudget = 3;
  std::size_t calls = 0;
  while (rig.table.size() > 0 && calls < 100 * kFlows) {
    EXPECT_LE(rig.expire(kBudget), kBudget);
    ++calls;
  }
  EXPECT_EQ(rig.table.size(), 0u);
  EXPECT_EQ(rig.total_expiries(), kFlows);
  EXPECT_EQ(rig.expire(), 0u);
}

TYPED_TEST(AgingPolicyTest, CancelledFlowsAreNeverReported) {
  auto& rig = this->rig;
  const std::vector<FlowId> ids = this->start_flows(0, kFlows, kTimeout / 2);
  for (std::size_t i = 0; i < ids.size(); i += 2) rig.remove(ids[i]);

  rig.run_for(this->drain_time());
  EXPECT_EQ(rig.table.size(), 0u);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(rig.expiries(ids[i]), i % 2) << "flow " << ids[i];
}

TYPED_TEST(AgingPolicyTest, ReusedIdsExpireOnTheirNewFlowsDeadline) {
  auto& rig = this->rig;
  const std::vector<FlowId> first = this->start_flows(0, kFlows / 2);
  for (const FlowId id : first) rig.remove(id);
  // The table hands the freed ids to new flows, armed later: the old timers must not take them early
  // (the rig fails any report before a flow's own deadline).
  rig.run_for(kTimeout / 2);
  const std::vector<FlowId> second = this->start_flows(kFlows, kFlows / 2);
  rig.run_for(this->drain_time());
  EXPECT_EQ(rig.table.size(), 0u);
  EXPECT_EQ(rig.total_expiries(), second.size());
  EXPECT_LE(rig.max_lateness(), rig.lateness_bound());
}

TYPED_TEST(AgingPolicyTest, TimeoutChangesMoveTheDeadlineBothWays) {
  auto& rig = this->rig;
  const std::vector<FlowId> ids = this->start_flows(0, kFlows);
  rig.run_for(kTimeout / 4);
  // Even flows shorten to a tenth of the timeout, odd ones lengthen to three times it.
  for (std::size_t i = 0; i < ids.size(); ++i) rig.set_timeout(ids[i], i % 2 == 0 ? kTimeout / 10 : 3 * kTimeout);

  rig.run_for(kTimeout / 10 + rig.lateness_bound() + kTick);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(rig.expiries(ids[i]), i % 2 == 0 ? 1u : 0u);

  rig.run_for(3 * kTimeout + rig.lateness_bound() + kTick);
  EXPECT_EQ(rig.table.size(), 0u);
  EXPECT_EQ(rig.total_expiries(), ids.size());
  EXPECT_LE(rig.max_lateness(), rig.lateness_bound());
}

}  // namespace
}  // namespace flowtrack::testing
