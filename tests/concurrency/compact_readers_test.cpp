// The compact lookup structures keep their single-writer / many-readers promise: reader threads looking
// up a fixed set of keys always get those keys' values, never a torn or half-applied one, while the
// writer applies the messages of a churn at ~93 % load (long cuckoo paths for Ludo and Cuckoo Filtable,
// half-tree rewrites for Othello, level-2 moves for the Filtable, locator rebuilds for Ludo).
// Runs under ThreadSanitizer in `make test`.
//
// A message carrying a whole image of another geometry (the table grew) may only be applied with no
// reader inside: the writer then parks the readers first, as a runtime would apply it between bursts.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "support/compact_cases.hpp"

namespace flowtrack::testing {
namespace {

template <class Case>
class CompactReaders : public ::testing::Test {};

using Cases = ::testing::Types<OthelloCase<std::uint64_t>, FiltableCase<std::uint64_t>, LudoCase<std::uint64_t>,
                               LudoCase<FlowKeyV4>>;
TYPED_TEST_SUITE(CompactReaders, Cases);

std::uint64_t stable_value(std::uint64_t n) { return (n * 2654435761u) & 0xfff; }

TYPED_TEST(CompactReaders, ReadersAlwaysSeeStableKeysValuesWhileTheWriterChurns) {
  using Key = typename TypeParam::Key;
  constexpr std::uint64_t kCapacity = 2048;
  constexpr std::uint64_t kStable = kCapacity / 4;
  const std::uint64_t window = kCapacity * 93 / 100 - kStable;  // churned keys live at any time
  auto builder = TypeParam::make(kCapacity, 12, 11);
  for (std::uint64_t n = 0; n < kStable; ++n) builder.insert(compact_key<Key>(n), stable_value(n));
  for (std::uint64_t i = 0; i < window; ++i) builder.insert(compact_key<Key>(kStable + i), i & 0xfff);
  auto lookup = TypeParam::export_lookup(builder);

  std::atomic<bool> stop{false};
  std::atomic<int> pause{0}, parked{0};
  std::atomic<std::uint64_t> wrong{0}, reads{0};
  auto reader = [&](std::uint64_t stride) {
    std::uint64_t n = 0;
    std::vector<Key> burst(16);
    std::vector<std::uint64_t> values(16);
    while (!stop.load(std::memory_order_acquire)) {
      if (pause.load(std::memory_order_acquire) != 0) {
        parked.fetch_add(1, std::memory_order_acq_rel);
        while (pause.load(std::memory_order_acquire) != 0) std::this_thread::yield();
        parked.fetch_sub(1, std::memory_order_acq_rel);
        continue;
      }
      std::vector<std::uint64_t> numbers;
      for (auto& k : burst) {
        n = (n + stride) % kStable;
        numbers.push_back(n);
        k = compact_key<Key>(n);
      }
      TypeParam::read_bulk(*lookup, burst, values);
      for (std::size_t i = 0; i < burst.size(); ++i) {
        if (values[i] != stable_value(numbers[i])) wrong.fetch_add(1, std::memory_order_relaxed);
        if (TypeParam::read(*lookup, burst[i]) != stable_value(numbers[i])) wrong.fetch_add(1, std::memory_order_relaxed);
      }
      reads.fetch_add(2 * burst.size(), std::memory_order_release);
    }
  };
  constexpr int kReaders = 2;
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) readers.emplace_back(reader, 7 + 2 * r);

  auto apply = [&](const auto& message) {
    if (!message.image) {
      lookup->apply(message);
      return;
    }
    pause.store(1, std::memory_order_release);
    while (parked.load(std::memory_order_acquire) != kReaders) std::this_thread::yield();
    lookup->apply(message);
    pause.store(0, std::memory_order_release);
  };
  // The churn takes a few milliseconds, less than a scheduler's time slice: left alone, the writer can
  // finish before a reader has run at all. So it waits for the readers' progress before it starts and
  // at every checkpoint, which makes every stretch of the churn overlap reads.
  std::uint64_t seen = 0;
  auto wait_for_reads = [&] {
    while (reads.load(std::memory_order_acquire) == seen) std::this_thread::yield();
    seen = reads.load(std::memory_order_acquire);
  };
  constexpr std::uint64_t kCheckpoint = 250;
  // Sliding window: insert the next churn key, change one, delete the one `window` behind.
  const std::uint64_t ops = 6000 * static_cast<std::uint64_t>(test_scale());
  for (std::uint64_t i = window; i < window + ops; ++i) {
    if ((i - window) % kCheckpoint == 0) wait_for_reads();
    apply(builder.insert(compact_key<Key>(kStable + i), i & 0xfff));
    apply(builder.insert(compact_key<Key>(kStable + i - window / 2), (i * 3) & 0xfff));
    apply(builder.erase(compact_key<Key>(kStable + i - window)));
  }
  stop.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_TRUE(TypeParam::identical(*lookup, builder));
}

}  // namespace
}  // namespace flowtrack::testing
