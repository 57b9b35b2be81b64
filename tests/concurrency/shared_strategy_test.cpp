// Every shared scaling strategy under many writers: worker threads each churn their own flows (as RSS
// gives each core its own connections) while an expirer thread removes its flows with scan() where the
// table allows a scan beside writers, and with erase() where it does not. Checked all along: a worker
// always finds its live flows under the id their insert returned, never finds an erased one, and no id
// is ever held by two live flows at once; at the end the table holds exactly the live flows.
// Runs under ThreadSanitizer (and ASan) in `make test`.
#include <gtest/gtest.h>

#include <absl/container/flat_hash_map.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/lab/libcuckoo_table.hpp"
#include "flowtrack/sync/lock_free_table.hpp"
#include "flowtrack/sync/locked_table.hpp"
#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/robin_hood.hpp"
#include "support/numbered_keys.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack {
namespace {

using testing::numbered_key;

template <class Table>
class SharedStrategy : public ::testing::Test {};

using CuckooLf = CuckooTable<FlowKeyV4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>;
using SharedTables =
    ::testing::Types<SpinlockTable<CuckooTable<FlowKeyV4>>, SpinlockTable<RobinHoodTable<FlowKeyV4>>,
                     PacketSpinlockTable<CuckooTable<FlowKeyV4>>,
                     RwLockTable<CuckooTable<FlowKeyV4>>, RwLockTable<ChainedTable<FlowKeyV4>>,
                     ChainedTable<FlowKeyV4, ChainLocking::striped>, LockFreeTable<CuckooLf>,
#ifdef FLOWTRACK_WITH_DPDK
                     LockFreeTable<DpdkTable<FlowKeyV4, DpdkMode::lock_free>>,
#endif
                     LibcuckooTable<FlowKeyV4>>;
TYPED_TEST_SUITE(SharedStrategy, SharedTables);

// libcuckoo's scan reads its id arrays without locks: it must not run beside writers.
template <class Table>
constexpr bool kScanBesideWriters = !std::is_same_v<Table, LibcuckooTable<FlowKeyV4>>;

// Registers the thread as a reader where the table needs it, and announces quiescence on request.
template <class Table>
class ReaderSlot {
  static constexpr bool kNeeded = requires(Table& t) { t.register_reader(); };

 public:
  explicit ReaderSlot(Table& table) : table_(table) {
    if constexpr (kNeeded) slot_ = table.register_reader();
  }
  ~ReaderSlot() {
    if constexpr (kNeeded) table_.unregister_reader(slot_);
  }
  void quiescent() {
    if constexpr (kNeeded) table_.quiescent(slot_);
  }

 private:
  Table& table_;
  unsigned slot_ = 0;
};

TYPED_TEST(SharedStrategy, OwnersChurnWhileExpirerScans) {
  static_assert(TypeParam::kConcurrency == Concurrency::many_writers);
  constexpr std::size_t kCapacity = 1024;  // small: cuckoo designs move entries all the time
  constexpr unsigned kOwners = 3;
  constexpr std::size_t kWindow = kCapacity * 3 / 16;  // live flows per thread: 4 threads reach ~75 %
  TypeParam table(kCapacity);
  std::vector<std::atomic<std::uint64_t>> holder(table.capacity());  // by id: 1 + flow number, 0 = free
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> failures{0}, operations{0};
  auto fail = [&] { failures.fetch_add(1, std::memory_order_relaxed); };

  // Takes the id for flow n; a second live holder of one id is a failure.
  auto claim = [&](FlowId id, std::uint64_t n) {
    std::uint64_t expected = 0;
    if (id >= holder.size() || !holder[id].compare_exchange_strong(expected, n + 1)) fail();
  };
  // Gives it back before the entry goes, so that no one else can have received the id yet.
  auto release = [&](FlowId id, std::uint64_t n) {
    if (id >= holder.size() || holder[id].exchange(0) != n + 1) fail();
  };

  struct Live {
    std::uint64_t n;
    FlowId id;
  };
  std::array<std::deque<Live>, kOwners> live;  // each owned by one thread until the end

  auto owner = [&](unsigned t) {
    ReaderSlot<TypeParam> slot(table);
    std::deque<Live>& mine = live[t];
    std::uint64_t next = std::uint64_t{t} << 40;
    while (!stop.load(std::memory_order_relaxed)) {
      const FlowKeyV4 key = numbered_key<FlowKeyV4>(next);
      const InsertResult r = table.insert(key, flow_hash(key));
      if (r.is_new()) {
        claim(r.id, next);
        mine.push_back({next, r.id});
      } else if (r.ok()) {
        fail();  // nobody else inserts this thread's keys
      }
      ++next;
      // Bulk lookup of (up to) the 16 newest live flows: each under its own id.
      std::array<FlowKeyV4, 16> keys;
      std::array<std::uint32_t, 16> hashes;
      std::array<FlowId, 16> ids;
      const std::size_t burst = std::min<std::size_t>(16, mine.size());
      for (std::size_t i = 0; i < burst; ++i) {
        keys[i] = numbered_key<FlowKeyV4>(mine[mine.size() - 1 - i].n);
        hashes[i] = flow_hash(keys[i]);
      }
      table.find_bulk(std::span(keys).first(burst), std::span(hashes).first(burst), std::span(ids).first(burst));
      for (std::size_t i = 0; i < burst; ++i) {
        if (ids[i] != mine[mine.size() - 1 - i].id) fail();
      }
      if (mine.size() > kWindow) {
        const Live old = mine.front();
        mine.pop_front();
        const FlowKeyV4 old_key = numbered_key<FlowKeyV4>(old.n);
        release(old.id, old.n);
        if (!table.erase(old_key, flow_hash(old_key))) fail();
        if (table.find(old_key, flow_hash(old_key)) != kNoFlow) fail();
      }
      slot.quiescent();
      operations.fetch_add(1, std::memory_order_relaxed);
    }
  };

  // The expirer inserts flows of its own and ages them out oldest first.
  absl::flat_hash_map<std::uint64_t, std::uint64_t> expirer_live;  // key hash -> flow number
  auto expirer = [&] {
    ReaderSlot<TypeParam> slot(table);
    std::uint64_t next = std::uint64_t{kOwners} << 40, oldest = next;
    std::size_t cursor = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const FlowKeyV4 key = numbered_key<FlowKeyV4>(next);
      const InsertResult r = table.insert(key, flow_hash(key));
      if (r.is_new()) {
        claim(r.id, next);
        expirer_live[flow_hash(key)] = next;
      }
      ++next;
      if (next - oldest > kWindow) {
        const std::uint64_t cutoff = next - kWindow;  // flows numbered below are due
        if constexpr (kScanBesideWriters<TypeParam>) {
          table.scan(cursor, 32, [&](const FlowKeyV4& k, FlowId id) {
            const auto it = expirer_live.find(flow_hash(k));
            if (it == expirer_live.end() || numbered_key<FlowKeyV4>(it->second) != k || it->second >= cutoff) {
              return ScanAction::keep;  // another thread's flow, or not due yet
            }
            release(id, it->second);
            expirer_live.erase(it);
            return ScanAction::erase;
          });
        } else {
          for (; oldest < cutoff; ++oldest) {
            const FlowKeyV4 k = numbered_key<FlowKeyV4>(oldest);
            const auto it = expirer_live.find(flow_hash(k));
            if (it == expirer_live.end()) continue;
            const FlowId id = table.find(k, flow_hash(k));
            release(id, oldest);
            if (!table.erase(k, flow_hash(k))) fail();
            expirer_live.erase(it);
          }
        }
      }
      slot.quiescent();
    }
  };

  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kOwners; ++t) threads.emplace_back(owner, t);
  threads.emplace_back(expirer);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  for (auto& t : threads) t.join();

  EXPECT_EQ(failures.load(), 0u);
  EXPECT_GT(operations.load(), 100u);
  // Quiescent now: exactly the live flows remain, each under the id it was given.
  std::size_t expected = expirer_live.size();
  for (const auto& mine : live) {
    expected += mine.size();
    for (const Live& l : mine) {
      const FlowKeyV4 key = numbered_key<FlowKeyV4>(l.n);
      EXPECT_EQ(table.find(key, flow_hash(key)), l.id);
    }
  }
  EXPECT_EQ(table.size(), expected);
  std::size_t visited = 0;
  for_each_flow(table, [&](const FlowKeyV4&, FlowId id) {
    ++visited;
    EXPECT_NE(holder[id].load(), 0u) << "id " << id << " is in the table but no live flow holds it";
  });
  EXPECT_EQ(visited, expected);
}

}  // namespace
}  // namespace flowtrack
