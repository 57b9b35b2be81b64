// "lazy": Cuckoo++'s lazy deletion ([cuckoopp]; [conntrack-study]'s third deletion method). The
// deadline lives in the table's own bucket, next to the tag the lookup has just read, so a packet's
// refresh touches no other cache line; an expired entry is invisible to lookups at once and its slot is
// taken over by the next insert that needs it (InsertStatus::recycled), so the table needs no expiry
// pass to stay usable.
//
// advance() still sweeps the buckets, for two reasons: the owner must learn which flows ended (their
// state may hold resources, such as a NAT port), and the 16-bit stamps are only right while an expired
// entry is reclaimed within 2^14 stamp units of its deadline (see cuckoo_pp.hpp). Each call examines
// `buckets_per_call` buckets, or more when the wrap-around guard is owed buckets: every bucket must be
// examined once per 2^13 units of clock time, so time passing adds bucket_count / 2^13 buckets per
// unit to the debt. `budget` counts entries reclaimed; a call that runs out stops on its bucket and the
// next one resumes there, with the unpaid debt carried over (a budget too small for the expiry rate
// can thus break the guard; the tracker sizes it from the table).
//
// Accuracy: an entry is invisible from the first set_clock() at or after its deadline rounded up to a
// stamp unit (the table's clock moves with advance()); it is reported when the sweep reaches its bucket
// (within one sweep, bucket_count / buckets_per_call calls), or by the insert that recycles it first.
//
// Costs: touch: the flow's position, its timeout and one 16-bit store into the bucket. advance:
// buckets_per_call buckets, one cache line each. Memory per flow: 8 bytes (its timeout), on top of the
// table's own stamps.
// Concurrency: single thread, like the table.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "flowtrack/aging/aging_policy.hpp"

namespace flowtrack {

template <class Table>
concept LazyExpiryTable = FlowTable<Table> && requires(Table& table, const Table& const_table, FlowId id, Nanos ns,
                                                       std::size_t& cursor, std::size_t count) {
  table.enable_expiry(ns);
  table.set_clock(ns);
  table.set_deadline(id, ns);
  { const_table.unit_ns() } -> std::same_as<std::uint64_t>;
  { const_table.max_timeout_ns() } -> std::same_as<std::uint64_t>;
  { const_table.bucket_count() } -> std::same_as<std::size_t>;
  table.reclaim_expired(cursor, count, count, detail::IgnoreExpiry{});
};

template <LazyExpiryTable Table>
class LazyAging {
 public:
  static constexpr std::string_view kName = "lazy";
  static constexpr bool kRemovesFromTable = true;
  // The sweep examines every bucket at least once per this many stamp units.
  static constexpr std::uint64_t kGuardUnits = std::uint64_t{1} << 13;

  // Switches the table's lazy expiry on, with `start` as its clock. Throws std::invalid_argument when
  // buckets_per_call is zero.
  LazyAging(Table& table, std::size_t buckets_per_call, Nanos start = 0)
      : table_(table), timeouts_(table.capacity(), 0), buckets_per_call_(buckets_per_call), guarded_until_(start) {
    if (buckets_per_call == 0) throw std::invalid_argument("lazy aging: buckets_per_call must be positive");
    table.enable_expiry(start);
  }

  void arm(FlowId id, Nanos now, Nanos timeout) { set_timeout(id, now, timeout); }
  void touch(FlowId id, Nanos now) { table_.set_deadline(id, now + timeouts_[id]); }
  void set_timeout(FlowId id, Nanos now, Nanos timeout) {
    timeouts_[id] = std::min<Nanos>(timeout, table_.max_timeout_ns());
    touch(id, now);
  }
  // The entry leaves the table by erase; its stamp goes with it.
  void cancel(FlowId) {}

  template <class OnExpire>
  std::size_t advance(Nanos now, std::size_t budget, OnExpire&& on_expire) {
    table_.set_clock(now);
    const std::uint64_t elapsed_units = (now - guarded_until_) / table_.unit_ns();
    guarded_until_ += elapsed_units * table_.unit_ns();
    debt_ += (elapsed_units * table_.bucket_count() + kGuardUnits - 1) / kGuardUnits;
    const std::size_t wanted =
        std::min<std::size_t>(std::max<std::size_t>(buckets_per_call_, debt_), table_.bucket_count());
    const auto [finished, reclaimed] = table_.reclaim_expired(cursor_, wanted, budget, on_expire);
    debt_ -= std::min<std::size_t>(debt_, finished);
    return reclaimed;
  }

  std::size_t calls_per_sweep() const { return (table_.bucket_count() + buckets_per_call_ - 1) / buckets_per_call_; }
  Nanos timeout(FlowId id) const { return timeouts_[id]; }
  std::size_t capacity() const { return timeouts_.size(); }
  std::size_t memory_bytes() const { return sizeof(*this) + timeouts_.capacity() * sizeof(Nanos); }

 private:
  Table& table_;
  std::vector<Nanos> timeouts_;  // by id
  std::size_t buckets_per_call_;
  std::size_t cursor_ = 0;      // the next bucket the sweep examines
  std::size_t debt_ = 0;        // buckets the wrap-around guard is owed
  Nanos guarded_until_;         // clock time up to which the guard's debt has been counted
};

}  // namespace flowtrack
