// The network-function runner with one instance shared by the workers under a spinlock (NfScaling::
// spinlock) against one instance per worker, under ThreadSanitizer in `make test`: the shared instance
// must see every packet exactly once, take every call under its lock (TSan reports any access that is
// not), and, for a load balancer whose choice depends on the flow only, send out exactly the packets
// the sharded run sends.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/runtime/replay_run.hpp"
#include "flowtrack/runtime/sharing.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace flowtrack {
namespace {

PacketStore two_window_campus() {
  CampusProfile profile;
  profile.flows = 1'500;
  return multiply_trace(generate_campus(profile), {.windows = 2});
}

StatefulLbConfig lb_config() {
  StatefulLbConfig c;
  for (const std::uint32_t server : {1u, 2u, 3u, 4u}) {
    ServiceConfig s{"web", to_network32(0xc6120000 + server), to_network16(443), ipproto::kTcp, {}};
    s.backends = {{"a", to_network32(0x0ac80001), 0, 1}, {"b", to_network32(0x0ac80002), 0, 3}};
    c.services.push_back(s);
  }
  c.policy = LbPolicy::maglev;
  c.max_connections = 10'000;
  c.maglev_size = 251;
  return c;
}

// Frames as strings of bytes: sortable, and comparable as a whole.
std::vector<std::string> sorted_output(const std::vector<WorkerReport>& results) {
  std::vector<std::string> frames;
  for (const WorkerReport& r : results) {
    for (std::size_t i = 0; i < r.out.size(); ++i) {
      const auto bytes = r.out[i].bytes;
      frames.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  }
  std::ranges::sort(frames);
  return frames;
}

std::uint64_t forwarded(const std::vector<WorkerReport>& results) {
  std::uint64_t sum = 0;
  for (const WorkerReport& r : results) sum += r.forwarded;
  return sum;
}

std::uint64_t packets(const std::vector<WorkerReport>& results) {
  std::uint64_t sum = 0;
  for (const WorkerReport& r : results) sum += r.counters.packets;
  return sum;
}

TEST(SharedNf, SpinlockedLoadBalancerSeesEveryPacketOnceAndEmitsWhatTheShardedOneDoes) {
  using Lb = StatefulLb<CuckooTable<FlowKeyV4>>;
  const PacketStore trace = two_window_campus();
  const PacketPartition partition = partition_by_rss(trace, RssSteering(2));
  const StatefulLbConfig config = lb_config();
  const auto make = [&](unsigned, unsigned, Nanos start) { return std::make_unique<Lb>(config, start); };
  const auto collect = [](const Lb& lb, WorkerReport& r) { r.live_connections = lb.tracker().size(); };
  OnePerWorker per_worker(make, 2);
  OneUnderLock under_lock(make, 2, first_time(trace, partition));
  const std::vector<WorkerReport> sharded = replay(trace, partition, per_worker, ReplayOptions{}, collect);
  const std::vector<WorkerReport> shared = replay(trace, partition, under_lock, ReplayOptions{}, collect);
  EXPECT_EQ(packets(shared), trace.size());
  EXPECT_EQ(forwarded(shared), trace.size());  // room for every connection: no drop
  EXPECT_EQ(shared[0].counters.function.connections_created,
            sharded[0].counters.function.connections_created + sharded[1].counters.function.connections_created);
  EXPECT_EQ(shared[1].counters.function.connections_created, 0u);  // the one instance's counters are reported once
  EXPECT_EQ(shared[0].live_connections + shared[1].live_connections,
            sharded[0].live_connections + sharded[1].live_connections);
  EXPECT_TRUE(sorted_output(shared) == sorted_output(sharded));
}

TEST(SharedNf, SpinlockedNatTracksEveryConnectionOfBothWorkers) {
  using Nat = Nat44<CuckooTable<FlowKeyV4>>;
  const PacketStore trace = two_window_campus();
  const PacketPartition partition = partition_by_rss(trace, RssSteering(2));
  NatConfig config;
  config.inside_network = to_network32(0x0a000000);
  config.inside_prefix_length = 8;
  config.pool = {to_network32(0xcb007101)};
  config.max_sessions = config.max_mappings = 10'000;
  OneUnderLock under_lock(
      [&](unsigned instance, unsigned instances, Nanos start) {
        EXPECT_EQ(instances, 1u);  // one instance, owning the whole port range
        return std::make_unique<Nat>(config, instance, instances, start);
      },
      2, first_time(trace, partition));
  const std::vector<WorkerReport> shared = replay(trace, partition, under_lock, ReplayOptions{}, [](const Nat&, WorkerReport&) {});
  EXPECT_EQ(packets(shared), trace.size());
  // The trace is captured inside: outbound packets open sessions (one per connection, ICMP included);
  // its inbound packets are addressed to inside hosts, not to the pool, and pass untouched.
  EXPECT_EQ(shared[0].counters.function.connections_created, 2u * 1'500u);
  EXPECT_EQ(forwarded(shared), trace.size());
}

}  // namespace
}  // namespace flowtrack
