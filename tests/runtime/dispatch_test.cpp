// The live dispatcher (`run --dispatch`, runtime/dispatched_replay.hpp): every packet is processed once by
// one worker or counted as a ring_full drop; RSS gives each worker exactly the packets, in the order, the
// partition before the run gives it, so no flow is reordered; LAPS moves connections off a slowed worker
// and the reordering that costs is counted; the tags keep a connection's two directions together; the
// reordering count follows its definition.
#include <gtest/gtest.h>

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/replay_run.hpp"
#include "flowtrack/runtime/reordering.hpp"
#include "flowtrack/runtime/sharing.hpp"

namespace flowtrack {
namespace {

using std::chrono::microseconds;

const PacketStore& dispatched_campus() {
  static const PacketStore trace = generate_campus({.flows = 1'000});
  return trace;
}

PacketPartition tagged_partition(const PacketStore& trace, unsigned workers) {
  PacketPartition partition = partition_by_rss(trace, RssSteering(workers));
  partition.tags = tag_packets(trace, RssSteering(workers));
  return partition;
}

std::vector<WorkerReport> forward(const PacketPartition& partition, unsigned workers, const DispatchOptions& dispatch) {
  OnePerWorker forwarders([](unsigned, unsigned, Nanos) { return std::make_unique<Forwarder>(); }, workers);
  return replay(dispatched_campus(), partition, forwarders, ReplayOptions{.dispatch = dispatch}, [](const Forwarder&, WorkerReport&) {});
}

std::vector<std::string> frames_of(const PacketStore& store) {
  std::vector<std::string> frames;
  for (std::size_t i = 0; i < store.size(); ++i) frames.emplace_back(reinterpret_cast<const char*>(store[i].bytes.data()), store[i].bytes.size());
  return frames;
}

// Taken by a worker or dropped at its ring: each packet of the trace exactly once; and what went out is
// a sub-multiset of the trace (nothing doubled, nothing invented), as large as the workers say.
void expect_every_packet_once(const std::vector<WorkerReport>& results, const char* policy) {
  std::uint64_t taken = 0, dropped = 0, forwarded = 0;
  std::vector<std::string> out;
  for (const WorkerReport& r : results) {
    taken += r.counters.packets;
    dropped += r.counters.ring_full;
    forwarded += r.forwarded;
    EXPECT_LE(r.counters.out_of_order, r.counters.packets) << policy;
    const auto frames = frames_of(r.out);
    out.insert(out.end(), frames.begin(), frames.end());
  }
  EXPECT_EQ(taken + dropped, dispatched_campus().size()) << policy;
  EXPECT_EQ(out.size(), forwarded) << policy;
  std::vector<std::string> in = frames_of(dispatched_campus());
  std::ranges::sort(in);
  std::ranges::sort(out);
  EXPECT_TRUE(std::ranges::includes(in, out)) << policy;
}

TEST(Dispatcher, EveryPacketIsProcessedOnceOrCountedAsRingFull) {
  const PacketPartition partition = tagged_partition(dispatched_campus(), 2);
  for (const DispatchPolicy policy : {DispatchPolicy::rss, DispatchPolicy::laps}) {
    // Rings of 8 not waited on, and a worker 5 us slower per packet than the dispatcher: rings overflow.
    const auto results =
        forward(partition, 2, {.policy = policy, .ring_capacity = 8, .ring_wait = microseconds(0), .slow_worker = microseconds(5)});
    const char* name = policy == DispatchPolicy::rss ? "rss" : "laps";
    expect_every_packet_once(results, name);
    EXPECT_GT(results[0].counters.ring_full, 0u) << name << ": the slowed worker's ring never overflowed";
  }
}

TEST(Dispatcher, RssGivesEachWorkerThePartitionsPacketsInTraceOrder) {
  const PacketPartition partition = tagged_partition(dispatched_campus(), 2);
  const auto partitioned = forward(partition, 2, {});
  // Rings that hold the whole trace: nothing can be dropped, whatever the scheduling of the threads.
  const auto dispatched = forward(
      partition, 2, {.policy = DispatchPolicy::rss, .ring_capacity = dispatched_campus().size(), .slow_worker = microseconds(1)});
  for (unsigned w = 0; w < 2; ++w) {
    EXPECT_EQ(frames_of(dispatched[w].out), frames_of(partitioned[w].out)) << "worker " << w;
    EXPECT_EQ(dispatched[w].counters.ring_full, 0u);
    EXPECT_EQ(dispatched[w].counters.migrations_in, 0u);
    EXPECT_EQ(dispatched[w].counters.out_of_order, 0u) << "RSS keeps a flow on its worker, in order";
  }
}

TEST(Dispatcher, LapsMovesConnectionsOffASlowWorkerAndCountsTheReordering) {
  const PacketPartition partition = tagged_partition(dispatched_campus(), 2);
  // Rings that hold the trace: no queue reaches LAPS's threshold (half a ring), the map table alone decides.
  const auto hashed = forward(partition, 2, {.policy = DispatchPolicy::laps, .ring_capacity = dispatched_campus().size()});
  EXPECT_EQ(hashed[0].counters.migrations_in + hashed[1].counters.migrations_in, 0u);
  const auto results =
      forward(partition, 2, {.policy = DispatchPolicy::laps, .ring_capacity = 64, .slow_worker = microseconds(200)});
  expect_every_packet_once(results, "laps");
  // Connections move off worker 0 to worker 1, whose queue stays short, so worker 0 is handed fewer
  // packets than its buckets hold.
  EXPECT_GT(results[1].counters.migrations_in, results[0].counters.migrations_in);
  EXPECT_LT(results[0].counters.packets + results[0].counters.ring_full, hashed[0].counters.packets);
}

TEST(PacketTags, BothDirectionsOfAConnectionShareItsIdentityButNotTheirFlow) {
  const PacketStore& trace = dispatched_campus();
  const std::vector<PacketTag> tags = tag_packets(trace, RssSteering(4));
  absl::flat_hash_map<FlowKeyV4, PacketTag, FlowKeyHasher> by_key;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ParsedPacket parsed;
    ASSERT_EQ(parse_frame(trace[i].bytes, trace.link_type(), parsed), ParseStatus::ok);
    ASSERT_TRUE(tags[i].ip);
    by_key.emplace(parsed.key4, tags[i]);
    const auto reverse = by_key.find(parsed.key4.reversed());
    if (reverse == by_key.end() || parsed.key4.reversed() == parsed.key4) continue;
    ++pairs;
    EXPECT_EQ(reverse->second.connection, tags[i].connection);
    EXPECT_EQ(reverse->second.crc16, tags[i].crc16);
    EXPECT_EQ(reverse->second.rss_hash, tags[i].rss_hash);
    EXPECT_NE(reverse->second.flow, tags[i].flow);
  }
  EXPECT_GT(pairs, trace.size() / 2);
}

TEST(Reordering, APacketIsOutOfOrderWhenALaterOneOfItsFlowLeftFirst) {
  // Slots 0, 1, 2: flow 7; slot 3: flow 9; slot 4: not IP.
  std::vector<PacketTag> tags(5);
  for (std::size_t s = 0; s < 4; ++s) tags[s] = {.connection = 1, .flow = s < 3 ? 7u : 9u, .ip = true};
  // Worker 0 finishes slot 1 last, after worker 1 finished slot 2: slot 1 is out of order. Slots 0 and
  // 3 are first of what they meet; slot 4 has no flow.
  const std::vector<std::vector<Delivery>> deliveries = {{{0, 5}, {1, 30}, {4, 40}}, {{2, 20}, {3, 20}}};
  EXPECT_EQ(count_out_of_order(deliveries, tags), (std::vector<std::uint64_t>{1, 0}));
  // Finished at the same nanosecond: arrival order, nothing out of order.
  const std::vector<std::vector<Delivery>> tie = {{{1, 10}}, {{0, 10}}};
  EXPECT_EQ(count_out_of_order(tie, tags), (std::vector<std::uint64_t>{0, 0}));
}

}  // namespace
}  // namespace flowtrack
