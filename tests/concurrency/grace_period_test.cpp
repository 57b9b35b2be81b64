// Lock-free readers never see a FlowId reused under them: a writer churns flows (insert, publish the
// flow's number in a per-id owner array, erase the oldest) while readers look up recent flows and,
// before announcing quiescence, check that the id they found still belongs to the flow they asked for.
// Reusing an id at once (no grace period) fails this within milliseconds; see lock_free_table.hpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/sync/lock_free_table.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/numbered_keys.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack {
namespace {

using testing::numbered_key;

template <class Table>
class GracePeriod : public ::testing::Test {};

using Tables = ::testing::Types<
#ifdef FLOWTRACK_WITH_DPDK
    LockFreeTable<DpdkTable<FlowKeyV4, DpdkMode::lock_free>>,
#endif
    LockFreeTable<CuckooTable<FlowKeyV4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>>;
TYPED_TEST_SUITE(GracePeriod, Tables);

TYPED_TEST(GracePeriod, ReadersNeverSeeTheirIdReused) {
  constexpr std::size_t kCapacity = 256;  // few ids: each is reused as soon as it may be
  constexpr std::uint64_t kWindow = 128;  // live flows
  TypeParam table(kCapacity);
  std::vector<std::atomic<std::uint64_t>> owner(table.capacity());  // by id: 1 + flow number
  std::atomic<std::uint64_t> latest{0};  // flows [latest - kWindow, latest) are inserted and published
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> reused{0}, found{0};

  std::thread writer([&] {
    for (std::uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
      const FlowKeyV4 key = numbered_key<FlowKeyV4>(n);
      const InsertResult r = table.insert(key, flow_hash(key));
      if (r.is_new()) owner[r.id].store(n + 1, std::memory_order_release);
      latest.store(n + 1, std::memory_order_release);
      if (n >= kWindow) {
        const FlowKeyV4 old = numbered_key<FlowKeyV4>(n - kWindow);
        table.erase(old, flow_hash(old));
      }
    }
  });
  auto reader = [&](unsigned seed) {
    const unsigned slot = table.register_reader();
    std::mt19937_64 rng(seed);
    while (!stop.load(std::memory_order_relaxed)) {
      const std::uint64_t last = latest.load(std::memory_order_acquire);
      if (last == 0) continue;
      // The oldest live flows: the ones the writer erases next.
      const std::uint64_t n = last > kWindow ? last - kWindow + rng() % 8 : rng() % last;
      const FlowKeyV4 key = numbered_key<FlowKeyV4>(n);
      const FlowId id = table.find(key, flow_hash(key));
      if (id != kNoFlow) {
        found.fetch_add(1, std::memory_order_relaxed);
        for (int spin = 0; spin < 64; ++spin) {  // hold the id a while, as a worker does for a burst
          if (owner[id].load(std::memory_order_acquire) != n + 1) {
            reused.fetch_add(1, std::memory_order_relaxed);
            break;
          }
        }
      }
      table.quiescent(slot);
    }
    table.unregister_reader(slot);
  };
  std::thread r1(reader, 1), r2(reader, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  writer.join();
  r1.join();
  r2.join();
  EXPECT_EQ(reused.load(), 0u);
  EXPECT_GT(found.load(), 0u);
}

}  // namespace
}  // namespace flowtrack
