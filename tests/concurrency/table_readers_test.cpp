// Tables that promise concurrent readers (or writers) keep the promise: reader threads looking up a fixed
// set of present keys never miss one and never see a wrong id while writers churn other keys, forcing
// the table to move entries. Runs under ThreadSanitizer in `make test`.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/table/dpdk_table.hpp"
#include "flowtrack/table/libcuckoo_table.hpp"

namespace flowtrack {
namespace {

template <class Table>
class ConcurrentReaders : public ::testing::Test {};

using SharedTables = ::testing::Types<DpdkTable<FlowKeyV4, DpdkMode::rwlock>, DpdkTable<FlowKeyV4, DpdkMode::lock_free>,
                                      LibcuckooTable<FlowKeyV4>>;
TYPED_TEST_SUITE(ConcurrentReaders, SharedTables);

FlowKeyV4 key(std::uint32_t n) {
  return FlowKeyV4::from_host(0x0a000000u + n * 2654435761u, 0xc6120001, static_cast<std::uint16_t>(n), 443,
                              ipproto::kTcp);
}

TYPED_TEST(ConcurrentReaders, ReadersNeverMissWhileWritersChurn) {
  static_assert(TypeParam::kConcurrency != Concurrency::single_thread);
  constexpr std::uint32_t kCapacity = 1 << 14;
  constexpr std::uint32_t kStable = kCapacity / 4;  // always present
  TypeParam table(kCapacity);
  std::vector<FlowId> stable_ids(kStable);
  for (std::uint32_t n = 0; n < kStable; ++n) {
    const InsertResult r = table.insert(key(n), flow_hash(key(n)));
    ASSERT_TRUE(r.is_new());
    stable_ids[n] = r.id;
  }

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> misses{0}, wrong{0}, lookups{0};
  auto reader = [&] {
    std::uint32_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const FlowId id = table.find(key(n), flow_hash(key(n)));
      if (id == kNoFlow) misses.fetch_add(1, std::memory_order_relaxed);
      else if (id != stable_ids[n]) wrong.fetch_add(1, std::memory_order_relaxed);
      lookups.fetch_add(1, std::memory_order_relaxed);
      n = (n + 7) % kStable;
    }
  };
  // Churn keys above kStable: fill the table to ~90 % so inserts displace entries, then erase/insert.
  auto writer = [&](std::uint32_t first, std::uint32_t count) {
    std::uint32_t next = first;
    // At least 20k rounds, and on until the readers have overlapped with the churn for a while (bounded:
    // a starved reader thread cannot make this loop forever).
    for (int round = 0; round < 20'000 || (lookups.load(std::memory_order_relaxed) < 50'000 && round < 5'000'000);
         ++round) {
      const std::uint32_t victim = first + (next - first + count / 2) % count;
      table.erase(key(victim), flow_hash(key(victim)));
      table.insert(key(next), flow_hash(key(next)));
      next = first + (next - first + 1) % count;
    }
  };
  const std::uint32_t churn = kCapacity * 9 / 10 - kStable;
  std::vector<std::thread> threads;
  threads.emplace_back(reader);
  threads.emplace_back(reader);
  if constexpr (TypeParam::kConcurrency == Concurrency::many_writers) {
    std::thread second_writer(writer, kStable + churn / 2, churn / 2);
    writer(kStable, churn / 2);
    second_writer.join();
  } else {
    writer(kStable, churn);
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(misses.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(lookups.load(), 0u);
  for (std::uint32_t n = 0; n < kStable; ++n) ASSERT_EQ(table.find(key(n), flow_hash(key(n))), stable_ids[n]);
}

}  // namespace
}  // namespace flowtrack
