// Test scaffolding for the aging policies: a real flow table, a policy over it and a fake clock, driven
// the way the tracker will drive them (a packet inserts or touches, a tick advances), plus an
// independent record of every flow's expected deadline, against which each expiry is checked.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include "flowtrack/aging/heap_aging.hpp"
#include "flowtrack/aging/lazy_aging.hpp"
#include "flowtrack/aging/scan_aging.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"
#include "flowtrack/table/robin_hood.hpp"
#include "flowtrack/util/time.hpp"
#include "support/numbered_keys.hpp"

namespace flowtrack::testing {

inline constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

// How each policy is built over a table, and how late it may report a flow when advanced once per
// tick without a budget. The scan walks an eighth of the table per tick, so a sweep takes eight ticks.
struct WheelMaker {
  template <class Table>
  using Policy = TimerWheel;
  template <class Table>
  static TimerWheel make(Table& table, Nanos tick) {
    return TimerWheel(table.capacity(), {.tick = tick, .levels = 4, .start = 0});
  }
  static Nanos lateness_bound(const TimerWheel&, Nanos tick) { return tick; }
};
struct HeapMaker {
  template <class Table>
  using Policy = HeapAging;
  template <class Table>
  static HeapAging make(Table& table, Nanos) {
    return HeapAging(table.capacity());
  }
  static Nanos lateness_bound(const HeapAging&, Nanos tick) { return tick; }
};
struct ScanMaker {
  template <class Table>
  using Policy = ScanAging<Table>;
  template <class Table>
  static ScanAging<Table> make(Table& table, Nanos) {
    return ScanAging<Table>(table, (table.scan_positions() + 7) / 8);
  }
  template <class Table>
  static Nanos lateness_bound(const ScanAging<Table>& scan, Nanos tick) {
    return scan.calls_per_sweep() * tick;
  }
};

// Cuckoo++ with 2^16 ns (65.5 us) stamp units, fine enough for millisecond ticks (and timeouts up to 1 s).
template <class Key>
struct FineCuckooPP : CuckooPPTable<Key> {
  static constexpr unsigned kStampShift = 16;
  explicit FineCuckooPP(std::size_t capacity) : CuckooPPTable<Key>(capacity, kStampShift) {}
};

// The lazy sweep examines an eighth of the buckets per tick; a stamp unit of rounding comes on top.
struct LazyMaker {
  template <class Table>
  using Policy = LazyAging<Table>;
  template <class Table>
  static LazyAging<Table> make(Table& table, Nanos) {
    return LazyAging<Table>(table, (table.bucket_count() + 7) / 8);
  }
  template <class Table>
  static Nanos lateness_bound(const LazyAging<Table>& lazy, Nanos tick) {
    return lazy.calls_per_sweep() * tick + (Nanos{1} << Table::kStampShift);
  }
};

template <class Maker, class TableType>
struct Setup {
  using Table = TableType;
  using Policy = typename Maker::template Policy<Table>;
  static Policy make(Table& table, Nanos tick) { return Maker::make(table, tick); }
  static Nanos lateness_bound(const Policy& policy, Nanos tick) { return Maker::lateness_bound(policy, tick); }
};

template <class S>
class AgingRig {
 public:
  using Table = typename S::Table;
  using Policy = typename S::Policy;
  using Key = typename Table::key_type;

  AgingRig(std::size_t capacity, Nanos tick, Nanos timeout)
      : table(capacity), policy(S::make(table, tick)), tick_(tick), timeout_(timeout),
        keys_(table.capacity()), expected_deadline_(table.capacity(), kNever), expiries_(table.capacity(), 0) {}

  // A packet of flow number n: inserts it (arming its timer) or refreshes it. Returns its id, or
  // nothing when the table is full.
  std::optional<FlowId> packet(std::uint64_t n) {
    const Key key = numbered_key<Key>(n);
    const InsertResult result = table.insert(key, flow_hash(key));
    if (!result.ok()) return std::nullopt;
    const Nanos now = clock.now();
    // A lazily expired flow whose slot and id the insert took over: this is its expiry report.
    if (result.status == InsertStatus::recycled) report_expiry(result.id, now);
    if (result.is_new()) {
      keys_[result.id] = key;
      policy.arm(result.id, now, timeout_);
    } else {
      policy.touch(result.id, now);
    }
    expected_deadline_[result.id] = now + timeout_;
    return result.id;
  }

  // The flow leaves by other means (say a TCP RST): erased from the table and cancelled.
  void remove(FlowId id) {
    ASSERT_TRUE(table.erase(keys_[id], flow_hash(keys_[id])));
    policy.cancel(id);
    expected_deadline_[id] = kNever;
  }

  void set_timeout(FlowId id, Nanos timeout) {
    policy.set_timeout(id, clock.now(), timeout);
    expected_deadline_[id] = clock.now() + timeout;
  }

  // One tick's expiry at the current time; checks each reported flow was live and due.
  std::size_t expire(std::size_t budget = kUnlimited) {
    const Nanos now = clock.now();
    return policy.advance(now, budget, [&](FlowId id) {
      report_expiry(id, now);
      if constexpr (!Policy::kRemovesFromTable) {
        EXPECT_TRUE(table.erase(keys_[id], flow_hash(keys_[id])));
      }
    });
  }

  // Moves the clock by `by` and expires, repeatedly, one tick at a time.
  void run_for(Nanos by) {
    for (Nanos passed = 0; passed < by; passed += tick_) {
      clock.advance(std::min(tick_, by - passed));
      expire();
    }
  }

  std::size_t expiries(FlowId id) const { return expiries_[id]; }
  std::size_t total_expiries() const {
    std::size_t total = 0;
    for (const std::size_t count : expiries_) total += count;
    return total;
  }
  Nanos expected_deadline(FlowId id) const { return expected_deadline_[id]; }
  // The longest time between a flow's deadline and its report.
  Nanos max_lateness() const { return max_lateness_; }
  Nanos lateness_bound() const { return S::lateness_bound(policy, tick_); }
  Nanos tick() const { return tick_; }
  Nanos timeout() const { return timeout_; }

  FakeClock clock;
  Table table;
  Policy policy;

 private:
  void report_expiry(FlowId id, Nanos now) {
    EXPECT_LE(expected_deadline_[id], now) << "flow " << id << " expired early (or was not live)";
    if (expected_deadline_[id] <= now) max_lateness_ = std::max(max_lateness_, now - expected_deadline_[id]);
    ++expiries_[id];
    expected_deadline_[id] = kNever;
  }

  Nanos tick_;
  Nanos timeout_;
  std::vector<Key> keys_;                  // per id, to erase flows the policy reports
  std::vector<Nanos> expected_deadline_;   // per id: last packet + timeout, kNever when not live
  std::vector<std::size_t> expiries_;      // per id: how many times it was reported
  Nanos max_lateness_ = 0;
};

}  // namespace flowtrack::testing
