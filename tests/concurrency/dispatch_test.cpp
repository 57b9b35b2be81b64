// The live dispatcher and its worker rings under ThreadSanitizer in `make test`: one dispatcher thread
// and two workers (more threads than this machine's two cores), rings small enough to fill, under both
// policies; TSan reports any hand-over of a slot, a packet buffer or a load count that the rings'
// acquire/release pairs do not order. Every packet is still taken once or counted as dropped.
#include <gtest/gtest.h>

#include <chrono>

#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/runtime/replay_run.hpp"
#include "flowtrack/runtime/sharing.hpp"

namespace flowtrack {
namespace {

TEST(Dispatcher, HandsEveryPacketToOneWorkerOrCountsItUnderContention) {
  CampusProfile profile;
  profile.flows = 300;
  const PacketStore trace = generate_campus(profile);
  PacketPartition partition = partition_by_rss(trace, RssSteering(2));
  partition.tags = tag_packets(trace, RssSteering(2));
  for (const DispatchPolicy policy : {DispatchPolicy::rss, DispatchPolicy::laps}) {
    for (const auto wait : {std::chrono::microseconds(0), std::chrono::microseconds(50'000)}) {
      const DispatchOptions dispatch{.policy = policy, .ring_capacity = 16, .ring_wait = wait, .slow_worker = std::chrono::microseconds(2)};
      OnePerWorker forwarders([](unsigned, unsigned, Nanos) { return std::make_unique<Forwarder>(); }, 2);
      const auto results = replay(trace, partition, forwarders, ReplayOptions{.dispatch = dispatch}, [](const Forwarder&, WorkerReport&) {});
      std::uint64_t accounted = 0;
      for (const WorkerReport& r : results) {
        accounted += r.counters.packets + r.counters.ring_full;
        EXPECT_EQ(r.forwarded, r.counters.packets);
        EXPECT_EQ(r.out.size(), r.counters.packets);
      }
      EXPECT_EQ(accounted, trace.size());
    }
  }
}

}  // namespace
}  // namespace flowtrack
