// The baselines do what the paper says of them: AFS shifts any flow off an overloaded core and keeps it
// there, FCFS follows the shortest queue packet by packet, RSS ignores load altogether.
#include <gtest/gtest.h>

#include "sched_fixtures.hpp"
#include "flowtrack/sched/afs_scheduler.hpp"
#include "flowtrack/sched/fcfs_scheduler.hpp"
#include "flowtrack/sched/rss_scheduler.hpp"

namespace flowtrack {
namespace {

using testing::fill;

SchedulerConfig four_cores() {
  SchedulerConfig config;
  config.cores = 4;
  config.services = 1;
  config.queue_threshold = 3;
  return config;
}

TEST(AfsScheduler, ShiftsAnyFlowOffAnOverloadedCoreAndKeepsItThere) {
  CoreLoads loads(4);
  AfsScheduler afs(four_cores(), loads);
  const PacketRef first_packet{7, 0, 2, 0};  // CRC 2: core 2 of four
  EXPECT_EQ(afs.core_for(first_packet, 0), 2u);
  fill(loads, 2, 3);
  fill(loads, 0, 2);
  fill(loads, 3, 1);
  // Even a flow never seen before moves: AFS has no detector. Core 1 is idle.
  EXPECT_EQ(afs.core_for(first_packet, 1), 1u);
  EXPECT_EQ(afs.counters().migrations, 1u);
  fill(loads, 1, 2);
  EXPECT_EQ(afs.core_for(first_packet, 2), 1u);
}

TEST(AfsScheduler, StaysPutWhenNoCoreIsUnderTheThreshold) {
  CoreLoads loads(4);
  AfsScheduler afs(four_cores(), loads);
  for (unsigned c = 0; c < 4; ++c) fill(loads, c, 3 + c);
  EXPECT_EQ(afs.core_for({7, 0, 2, 0}, 0), 2u);
  EXPECT_EQ(afs.counters().migrations, 0u);

  SchedulerConfig literal = four_cores();
  literal.migration_target = MigrationTarget::any_lighter;
  AfsScheduler any_lighter(literal, loads);
  EXPECT_EQ(any_lighter.core_for({7, 0, 2, 0}, 0), 0u);  // core 0 holds 3 packets against core 2's 5
}

TEST(FcfsScheduler, SendsEachPacketToTheShortestQueue) {
  CoreLoads loads(4);
  FcfsScheduler fcfs(loads);
  EXPECT_EQ(fcfs.core_for({1, 0, 0, 0}, 0), 0u);  // all empty: the lowest id
  fill(loads, 0, 1);
  EXPECT_EQ(fcfs.core_for({1, 0, 0, 0}, 0), 1u);  // same flow, other core
  fill(loads, 1, 1);
  fill(loads, 2, 1);
  EXPECT_EQ(fcfs.core_for({1, 0, 0, 0}, 0), 3u);
}

TEST(RssScheduler, IgnoresLoadAndSpreadsHashesOverEveryCore) {
  RssScheduler rss(4);
  std::vector<unsigned> per_core(4, 0);
  for (std::uint32_t hash = 0; hash < 128; ++hash) {
    const unsigned core = rss.core_for({hash, hash, 0, 0}, 0);
    ASSERT_LT(core, 4u);
    ++per_core[core];
    EXPECT_EQ(rss.core_for({hash, hash, 0, 0}, 1), core);
  }
  for (unsigned count : per_core) EXPECT_EQ(count, 32u);
}

}  // namespace
}  // namespace flowtrack
