// Tables that promise concurrent readers (or writers) keep the promise: reader threads looking up a fixed
// set of present keys never miss one and never see a wrong id while writers churn other keys, forcing
// the table to move entries. Runs under ThreadSanitizer in `make test`.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/lab/libcuckoo_table.hpp"
#include "flowtrack/table/cuckoo.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack {
namespace {

template <class Table>
class ConcurrentReaders : public ::testing::Test {};

using ReadersTables = ::testing::Types<
#ifdef FLOWTRACK_WITH_DPDK
                                      DpdkTable<FlowKeyV4, DpdkMode::rwlock>, DpdkTable<FlowKeyV4, DpdkMode::lock_free>,
#endif
                                      LibcuckooTable<FlowKeyV4>,
                                      CuckooTable<FlowKeyV4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>;
TYPED_TEST_SUITE(ConcurrentReaders, ReadersTables);

FlowKeyV4 key(std::uint32_t n) {
  return FlowKeyV4::from_host(0x0a000000u + n * 2654435761u, 0xc6120001, static_cast<std::uint16_t>(n), 443,
                              ipproto::kTcp);
}

TYPED_TEST(ConcurrentReaders, ReadersNeverMissWhileWritersChurn) {
  static_assert(TypeParam::kConcurrency != Concurrency::single_thread);
  constexpr std::uint32_t kCapacity = 1 << 10;  // small: each stable key is moved often
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
  auto check = [&](std::uint32_t n, FlowId id) {
    if (id == kNoFlow) misses.fetch_add(1, std::memory_order_relaxed);
    else if (id != stable_ids[n]) wrong.fetch_add(1, std::memory_order_relaxed);
    lookups.fetch_add(1, std::memory_order_relaxed);
  };
  // Single lookups and bursts of 16 (bulk lookups read buckets in stages, a different interleaving).
  auto reader = [&] {
    constexpr std::size_t kBurst = 16;
    std::uint32_t n = 0;
    std::array<FlowKeyV4, kBurst> keys;
    std::array<std::uint32_t, kBurst> hashes, numbers;
    std::array<FlowId, kBurst> ids;
    while (!stop.load(std::memory_order_relaxed)) {
      check(n, table.find(key(n), flow_hash(key(n))));
      n = (n + 7) % kStable;
      for (std::size_t i = 0; i < kBurst; ++i, n = (n + 7) % kStable) {
        numbers[i] = n;
        keys[i] = key(n);
        hashes[i] = flow_hash(keys[i]);
      }
      table.find_bulk(keys, hashes, ids);
      for (std::size_t i = 0; i < kBurst; ++i) check(numbers[i], ids[i]);
    }
  };
  // Churn keys above kStable. Each writer owns 2W key numbers of which a sliding window of W is live
  // (insert the next, erase the one W behind), keeping the table at ~95 % load: most inserts meet two
  // full buckets and displace entries, stable ones included.
  constexpr std::uint32_t kWriters = TypeParam::kConcurrency == Concurrency::many_writers ? 2 : 1;
  const std::uint32_t window = (kCapacity * 95 / 100 - kStable) / kWriters;
  auto writer = [&](std::uint32_t first) {
    const std::uint32_t domain = 2 * window;
    for (std::uint32_t i = 0; i < window; ++i) table.insert(key(first + i), flow_hash(key(first + i)));
    std::uint32_t next = window;
    // At least 20k rounds and 300 ms of churn alongside the readers (a time bound on the work, not an
    // assertion on it: slow sanitizer builds just do fewer rounds).
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    for (int round = 0; round < 20'000 || std::chrono::steady_clock::now() < until; ++round) {
      const std::uint32_t old = first + (next + domain - window) % domain;
      table.erase(key(old), flow_hash(key(old)));
      table.insert(key(first + next), flow_hash(key(first + next)));
      next = (next + 1) % domain;
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(reader);
  threads.emplace_back(reader);
  if constexpr (TypeParam::kConcurrency == Concurrency::many_writers) {
    std::thread second_writer(writer, kStable + 2 * window);
    writer(kStable);
    second_writer.join();
  } else {
    writer(kStable);
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
