// The per-core runtime end to end on a synthetic campus trace: every packet is taken exactly once,
// tracked or counted as a drop, and every flow is inserted exactly once across all workers, whatever
// the strategy, steering and number of workers. Also the SPSC ring's hand-over under ThreadSanitizer.
#include <gtest/gtest.h>

#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/lab/libcuckoo_table.hpp"
#include "flowtrack/lab/map_adapter.hpp"
#include "flowtrack/lab/scale_run.hpp"
#include "flowtrack/sync/lock_free_table.hpp"
#include "flowtrack/sync/locked_table.hpp"
#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/robin_hood.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack {
namespace {

TEST(SpscRing, EveryItemArrivesOnceInOrder) {
  SpscRing ring(64);
  constexpr std::uint32_t kItems = 200'000;
  std::thread producer([&] {
    std::mt19937 rng(1);
    std::vector<std::uint32_t> burst;
    for (std::uint32_t next = 0; next < kItems;) {
      burst.clear();
      const std::uint32_t n = std::min<std::uint32_t>(1 + rng() % 40, kItems - next);
      for (std::uint32_t i = 0; i < n; ++i) burst.push_back(next + i);
      std::span<const std::uint32_t> left(burst);
      while (!left.empty()) left = left.subspan(ring.push(left));
      next += n;
    }
  });
  std::uint32_t expected = 0;
  std::array<std::uint32_t, 32> out;
  bool in_order = true;
  while (expected < kItems) {
    const std::size_t n = ring.pop(std::span(out).first(1 + expected % 32));
    for (std::size_t i = 0; i < n; ++i) in_order &= out[i] == expected++;
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(ring.pop(out), 0u);
}

const PacketStore& campus_trace() {
  static const PacketStore trace = [] {
    CampusProfile profile;
    profile.flows = 600;
    profile.new_flows_per_second = 5'000;
    return multiply_trace(generate_campus(profile), {.windows = 2});
  }();
  return trace;
}

std::size_t distinct_ipv4_keys(const PacketStore& store) {
  absl::flat_hash_set<FlowKeyV4, FlowKeyHasher> keys;
  for (std::size_t i = 0; i < store.size(); ++i) {
    ParsedPacket parsed;
    if (parse_frame(store[i].bytes, store.link_type(), parsed) == ParseStatus::ok && parsed.ip_version == 4) {
      keys.insert(parsed.key4);
    }
  }
  return keys.size();
}

// One configuration of the runtime: where the table lives, its type, how packets reach workers, and
// how many workers there are. The ten cases cover every strategy and both steerings.
template <Placement P, class T, Steering S, unsigned W>
struct RuntimeCase {
  static constexpr Placement kPlacement = P;
  using Table = T;
  static constexpr Steering kSteering = S;
  static constexpr unsigned kWorkers = W;
};

using V4 = FlowKeyV4;
using RuntimeCases = ::testing::Types<
    RuntimeCase<Placement::sharded, CuckooTable<V4>, Steering::hardware, 2>,
    RuntimeCase<Placement::sharded, ChainedTable<V4>, Steering::software, 2>,
    RuntimeCase<Placement::shared, SpinlockTable<CuckooTable<V4>>, Steering::hardware, 2>,
    RuntimeCase<Placement::shared, PacketSpinlockTable<RobinHoodTable<V4>>, Steering::hardware, 2>,
    RuntimeCase<Placement::shared, RwLockTable<SwissTable<V4>>, Steering::software, 2>,
    RuntimeCase<Placement::shared, ChainedTable<V4, ChainLocking::striped>, Steering::hardware, 2>,
    RuntimeCase<Placement::shared, LockFreeTable<CuckooTable<V4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>,
                Steering::hardware, 2>,
#ifdef FLOWTRACK_WITH_DPDK
    RuntimeCase<Placement::sharded, DpdkTable<V4>, Steering::hardware, 1>,
    RuntimeCase<Placement::shared, LockFreeTable<DpdkTable<V4, DpdkMode::lock_free>>, Steering::software, 2>,
#endif
    RuntimeCase<Placement::shared, LibcuckooTable<V4>, Steering::hardware, 2>>;

struct RuntimeCaseName {
  template <class C>
  static std::string GetName(int) {
    std::string name = fmt::format("{}_{}_{}{}", C::kPlacement == Placement::sharded ? "sharded" : "shared", C::Table::kName,
                                   C::kSteering == Steering::hardware ? "hw" : "sw", C::kWorkers);
    std::ranges::replace(name, '-', '_');
    return name;
  }
};

template <class C>
class RuntimeRun : public ::testing::Test {};
TYPED_TEST_SUITE(RuntimeRun, RuntimeCases, RuntimeCaseName);

TYPED_TEST(RuntimeRun, EveryPacketOnceEveryFlowInsertedOnce) {
  using C = TypeParam;
  const PacketStore& trace = campus_trace();
  ScaleRunOptions options;
  options.workers = C::kWorkers;
  options.steering = C::kSteering;
  options.passes = 2;  // the second pass finds every flow
  options.pin = false;  // the test machine may have fewer cores than threads
  const ScaleReport report = scale_run<C::kPlacement, typename C::Table>(trace, options);
  EXPECT_EQ(report.total.packets, 2 * trace.size());
  EXPECT_EQ(report.total.function.forwarded + report.total.drops(), report.total.packets);
  EXPECT_EQ(report.total.drops(), 0u);  // the campus trace is all well-formed IPv4
  const std::size_t flows = distinct_ipv4_keys(trace);
  EXPECT_EQ(report.total.function.connections_created, flows);  // once across all workers: RSS kept each flow on one core
  EXPECT_EQ(report.flows, flows);
  EXPECT_LE(report.load(), 0.76);
  for (const WorkerCounters& w : report.workers) EXPECT_GT(w.bursts, 0u);  // every worker took part
}

// With aging, flows that go idle longer than the timeout leave the table and come back as new flows;
// every expiry is of a flow that was inserted, and the table never holds more than was inserted.
// Inserts may fail as full here, and legitimately: with the lock-free strategy an expired flow's id is
// reused only after the other worker's next quiescent state, and an unpinned worker that the OS
// descheduled for a time slice holds back ids the other is freeing at microsecond timeouts. Such
// packets must be counted as table_full drops, never lost.
TEST(RuntimeAging, IdleFlowsExpireAndReturn) {
  const PacketStore& trace = campus_trace();
  ScaleRunOptions options;
  options.workers = 2;
  options.passes = 3;
  options.pin = false;
  options.load = 0.1;
  options.aging = {.timeout = 20 * kNanosPerMicro, .tick = 10 * kNanosPerMicro};
  options.pps_per_worker = 2e6;  // paced, so that whole passes take milliseconds and flows go idle
  using LockFreeCuckoo = LockFreeTable<CuckooTable<FlowKeyV4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>;
  const ScaleReport report = scale_run<Placement::shared, LockFreeCuckoo>(trace, options);
  const std::size_t flows = distinct_ipv4_keys(trace);
  const NfCounters& meters = report.total.function;
  EXPECT_GT(meters.connections_expired, 0u);
  EXPECT_GT(meters.connections_created, flows);  // some came back after expiring
  EXPECT_EQ(meters.connections_created - meters.connections_expired, report.flows);
  EXPECT_EQ(report.total.packets, meters.forwarded + report.total.drops());
  EXPECT_EQ(report.total.drops(), meters.drops[static_cast<std::size_t>(NfDrop::table_full)]);
}

}  // namespace
}  // namespace flowtrack
