// The lock-based scaling strategies: one table shared by every worker, every call under one lock.
//
//  - SpinlockTable<T> ("spinlock"): a Spinlock around every call, reads included;
//    PacketSpinlockTable<T> ("spinlock-packet"): the same, locking per key inside a lookup burst.
//  - RwLockTable<T>   ("rwlock"):   std::shared_mutex; find and find_bulk share it, insert, erase and
//                                   scan hold it exclusively.
//
// Any table works inside, whatever its own contract: the lock makes the whole thing many_writers.
// LockGrain says how often a lookup burst locks:
//  - burst:  once for the whole find_bulk, the kindest way to lock (one acquisition per 32 packets);
//            what remains is the lock's cache line bouncing between cores and readers waiting behind
//            the writer.
//  - packet: once per key, as [conntrack-study] locks "all the access operations" ("spinlock-packet"): every
//            lookup pays an acquisition and a likely cache-line transfer.
// size() takes the lock too: it reads the inner table's counters.
#pragma once

#include <mutex>
#include <shared_mutex>
#include <string_view>

#include "flowtrack/util/spinlock.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

enum class LockGrain : std::uint8_t { burst, packet };

template <FlowTable Table, class Mutex, LockGrain Grain = LockGrain::burst>
class LockedTable {
 public:
  using key_type = typename Table::key_type;
  static constexpr bool kSharedReads = requires(Mutex& m) { m.lock_shared(); };
  static constexpr std::string_view kName = Table::kName;
  static constexpr Concurrency kConcurrency = Concurrency::many_writers;

  explicit LockedTable(std::size_t capacity) : table_(capacity) {}

  FlowId find(const key_type& key, std::uint32_t hash) const {
    ReadGuard guard(mutex_);
    return table_.find(key, hash);
  }

  std::uint64_t find_bulk(std::span<const key_type> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    if constexpr (Grain == LockGrain::packet) {
      return find_each(*this, keys, hashes, ids);
    } else {
      ReadGuard guard(mutex_);
      return table_.find_bulk(keys, hashes, ids);
    }
  }

  InsertResult insert(const key_type& key, std::uint32_t hash) {
    std::lock_guard guard(mutex_);
    return table_.insert(key, hash);
  }

  bool erase(const key_type& key, std::uint32_t hash) {
    std::lock_guard guard(mutex_);
    return table_.erase(key, hash);
  }

  // Holds the lock for the whole call: keep max_positions small when others are running.
  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::lock_guard guard(mutex_);
    return table_.scan(cursor, max_positions, visit);
  }

  std::size_t scan_positions() const { return table_.scan_positions(); }
  std::size_t size() const {
    ReadGuard guard(mutex_);
    return table_.size();
  }
  std::size_t capacity() const { return table_.capacity(); }
  std::size_t memory_bytes() const { return sizeof(*this) - sizeof(Table) + table_.memory_bytes(); }

 private:
  using ReadGuard = std::conditional_t<kSharedReads, std::shared_lock<Mutex>, std::lock_guard<Mutex>>;

  // The lock on its own cache line, away from the table's fields that every reader loads.
  alignas(64) mutable Mutex mutex_;
  alignas(64) Table table_;
};

template <FlowTable Table>
using SpinlockTable = LockedTable<Table, Spinlock>;
template <FlowTable Table>
using RwLockTable = LockedTable<Table, std::shared_mutex>;
template <FlowTable Table>
using PacketSpinlockTable = LockedTable<Table, Spinlock, LockGrain::packet>;

}  // namespace flowtrack
