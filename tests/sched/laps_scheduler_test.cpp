// LAPS's mechanisms, driven packet by packet with hand-set queue lengths: migration of aggressive flows
// only, migrated flows staying put, core allocation from the surplus list, and flows going home when
// the core they migrated to is given to another service.
#include <gtest/gtest.h>

#include "sched_fixtures.hpp"
#include "flowtrack/sched/laps_scheduler.hpp"
#include "flowtrack/sched/scheduler_factory.hpp"

namespace flowtrack {
namespace {

using testing::fill;

constexpr Picos kMicro = kPicosPerMicro;

SchedulerConfig small_config() {
  SchedulerConfig config;
  config.cores = 8;
  config.services = 2;  // service 0: cores 0-3, service 1: cores 4-7
  config.queue_threshold = 4;
  config.overload_low_water = 3;
  return config;
}

// A packet of `flow` in service 0 whose CRC lands on core 0 (bucket 0 of four buckets: hash mod 4 = 0).
PacketRef service0_packet(std::uint64_t flow) { return {flow, 0, static_cast<std::uint16_t>(flow * 4), 0}; }

TEST(LapsScheduler, StartsWithBlocksOfCoresPerService) {
  CoreLoads loads(8);
  LapsScheduler laps(small_config(), loads);
  for (unsigned core = 0; core < 8; ++core) EXPECT_EQ(laps.core_owner(core), core < 4 ? 0 : 1);
  EXPECT_EQ(laps.map_of(1).buckets(), 4u);
}

TEST(LapsScheduler, AMigratedFlowStaysOnItsNewCore) {
  CoreLoads loads(8);
  LapsScheduler laps(small_config(), loads);
  const PacketRef heavy = service0_packet(1);
  Picos now = 0;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(laps.core_for(heavy, now += kMicro), 0u);
  ASSERT_TRUE(laps.detector().aggressive(1));

  // Core 0 overloaded, core 2 the lightest of the service (cores 4-7 belong to the other service).
  fill(loads, 0, 4);
  fill(loads, 1, 2);
  fill(loads, 3, 2);
  fill(loads, 2, 1);
  for (unsigned c = 4; c < 8; ++c) fill(loads, c, 2);
  EXPECT_EQ(laps.core_for(heavy, now += kMicro), 2u);
  EXPECT_EQ(laps.counters().migrations, 1u);

  // The imbalance is gone; the flow stays where it went.
  for (unsigned c = 0; c < 8; ++c) {
    while (!loads.idle(c)) loads.depart(c, now);
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(laps.core_for(heavy, now += kMicro), 2u);
  EXPECT_EQ(laps.counters().migrations, 1u);
}

TEST(LapsScheduler, OnlyAggressiveFlowsMigrate) {
  CoreLoads loads(8);
  LapsScheduler laps(small_config(), loads);
  fill(loads, 0, 5);
  for (unsigned c = 4; c < 8; ++c) fill(loads, c, 1);
  // First packet of a flow: not in the detector's cache, so it stays on its overloaded core.
  EXPECT_EQ(laps.core_for(service0_packet(42), kMicro), 0u);
  EXPECT_EQ(laps.counters().migrations, 0u);
}

TEST(LapsScheduler, AnOverloadedServiceTakesTheCoreSurplusLongest) {
  CoreLoads loads(8);
  SchedulerConfig config = small_config();
  LapsScheduler laps(config, loads);
  // Service 0 is full everywhere; service 1's cores went idle at different times, 6 first.
  for (unsigned c = 0; c < 4; ++c) fill(loads, c, 4);
  const Picos t0 = 100 * kMicro;
  for (unsigned c : {6u, 4u, 5u, 7u}) {
    loads.arrive(c);
    loads.depart(c, t0 + c * kMicro);
  }
  loads.arrive(6);
  loads.depart(6, t0);
  // Not yet surplus: idle for less than the idle threshold.
  laps.core_for(service0_packet(1), t0 + 5 * kMicro);
  EXPECT_EQ(laps.counters().core_moves, 0u);
  laps.core_for(service0_packet(1), t0 + 20 * kMicro);
  EXPECT_EQ(laps.counters().core_moves, 1u);
  EXPECT_EQ(laps.core_owner(6), 0);
  EXPECT_EQ(laps.map_of(0).buckets(), 5u);
  EXPECT_EQ(laps.map_of(1).buckets(), 3u);
  // At most one core per idle threshold.
  laps.core_for(service0_packet(1), t0 + 21 * kMicro);
  EXPECT_EQ(laps.counters().core_moves, 1u);
}

TEST(LapsScheduler, AServiceNeverGivesAwayItsLastCore) {
  CoreLoads loads(2);
  SchedulerConfig config = small_config();
  config.cores = 2;
  LapsScheduler laps(config, loads);
  fill(loads, 0, 4);
  laps.core_for(service0_packet(1), 1000 * kMicro);
  EXPECT_EQ(laps.counters().core_moves, 0u);
  EXPECT_EQ(laps.core_owner(1), 1);
}

TEST(LapsScheduler, FlowsMigratedToACoreThatLeavesTheServiceGoBackToTheirBuckets) {
  CoreLoads loads(8);
  LapsScheduler laps(small_config(), loads);
  const PacketRef heavy = service0_packet(1);
  Picos now = 0;
  for (int i = 0; i < 3; ++i) laps.core_for(heavy, now += kMicro);
  fill(loads, 0, 4);
  for (unsigned c : {1u, 2u}) fill(loads, c, 2);
  for (unsigned c = 4; c < 8; ++c) fill(loads, c, 2);
  ASSERT_EQ(laps.core_for(heavy, now += kMicro), 3u);  // migrated to the idle core 3

  // Service 1 overloads while core 3 has been idle long: service 1 takes it.
  for (unsigned c = 4; c < 8; ++c) fill(loads, c, 3);
  now += 50 * kMicro;
  laps.core_for({99, 0, 0, 1}, now);
  ASSERT_EQ(laps.core_owner(3), 1);

  // The migration entry died with the move: the heavy flow is back on its bucket's core.
  for (unsigned c = 0; c < 8; ++c) {
    while (!loads.idle(c)) loads.depart(c, now);
  }
  const unsigned home = laps.map_of(0).core_of(heavy.crc16);
  EXPECT_NE(home, 3u);
  EXPECT_EQ(laps.core_for(heavy, now += kMicro), home);
}

TEST(SchedulerFactory, BuildsEveryPolicyAndRefusesUnknownOnes) {
  CoreLoads loads(16);
  for (std::string_view policy : scheduler_policies()) {
    auto scheduler = make_scheduler(policy, SchedulerConfig{}, loads);
    EXPECT_LT(scheduler->core_for({1, 2, 3, 0}, 0), 16u) << policy;
  }
  EXPECT_THROW(make_scheduler("roundrobin", SchedulerConfig{}, loads), std::invalid_argument);
  SchedulerConfig too_few;
  too_few.cores = 3;
  CoreLoads three(3);
  EXPECT_THROW(make_scheduler("laps", too_few, three), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
