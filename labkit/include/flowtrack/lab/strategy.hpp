// The scaling strategies by name, so the CLI and the benchmarks pick one at run time, and which tables
// each applies to. A strategy turns a table name into the type the workers share (or each own) and
// says where it lives:
//
//   sharded     any table, one per worker (Placement::sharded); no sharing at all
//   spinlock    a single-thread table, one for all, every call under a Spinlock (locked_table.hpp)
//   spinlock-packet  the same, but a lookup burst locks once per packet ([conntrack-study]'s setting)
//   rwlock      a single-thread table, one for all, std::shared_mutex         (locked_table.hpp)
//   striped     chained only: per-bucket locks ("chained-striped", chained.hpp)
//   lockfree    cuckoo-lf or dpdk-lf ("cuckoo" and "dpdk" mean their lock-free modes here): lock-free
//               lookups, serialised writes, grace-period reuse of ids        (lock_free_table.hpp)
//   concurrent  a table that is many_writers by itself: libcuckoo
//
// A lock around a table that brings its own concurrency (cuckoo-lf, the dpdk modes, libcuckoo) would
// pay twice for one guarantee, so the locks wrap single-thread tables only. The tables are those of
// this build's function grid (lab/registry.hpp); striped, lockfree and concurrent name their tables
// themselves.
#pragma once

#include <string_view>
#include <type_traits>

#include "flowtrack/lab/registry.hpp"
#include "flowtrack/sync/lock_free_table.hpp"
#include "flowtrack/sync/locked_table.hpp"
#include "flowtrack/lab/placement.hpp"
#include "flowtrack/lab/strategy_names.hpp"

namespace flowtrack {

// Calls fn(std::type_identity<T>{}, std::integral_constant<Placement, P>{}) for strategy S applied to
// the named table; false when S does not apply to that table. Only S's types are instantiated.
template <FlowKeyType Key, Strategy S, class Fn>
bool with_strategy(std::string_view table, Fn&& fn) {
  constexpr auto shared = std::integral_constant<Placement, Placement::shared>{};
  // Calls fn with Lock<T> for a single-thread table T; false for any other.
  const auto locked = [&]<template <class> class Lock>() {
    bool applies = false;
    with_table<Key, GridUse::functions>(table, [&]<class T>(std::type_identity<T>) {
      if constexpr (T::kConcurrency == Concurrency::single_thread) {
        fn(std::type_identity<Lock<T>>{}, shared);
        applies = true;
      }
    });
    return applies;
  };
  if constexpr (S == Strategy::sharded) {
    return with_table<Key, GridUse::functions>(table, [&]<class T>(std::type_identity<T> type) {
      fn(type, std::integral_constant<Placement, Placement::sharded>{});
    });
  } else if constexpr (S == Strategy::spinlock) {
    return locked.template operator()<SpinlockTable>();
  } else if constexpr (S == Strategy::spinlock_packet) {
    return locked.template operator()<PacketSpinlockTable>();
  } else if constexpr (S == Strategy::rwlock) {
    return locked.template operator()<RwLockTable>();
  } else if constexpr (S == Strategy::striped) {
    if (table != "chained" && table != "chained-striped") return false;
    fn(std::type_identity<ChainedTable<Key, ChainLocking::striped>>{}, shared);
    return true;
  } else if constexpr (S == Strategy::lockfree) {
    if (table == "cuckoo" || table == "cuckoo-lf") {
      fn(std::type_identity<LockFreeTable<CuckooTable<Key, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>>{}, shared);
      return true;
    }
#ifdef FLOWTRACK_WITH_DPDK
    if (table == "dpdk" || table == "dpdk-lf") {
      fn(std::type_identity<LockFreeTable<DpdkTable<Key, DpdkMode::lock_free>>>{}, shared);
      return true;
    }
#endif
    return false;
  } else {
    static_assert(S == Strategy::concurrent);
    if (table != "libcuckoo") return false;
    fn(std::type_identity<LibcuckooTable<Key>>{}, shared);
    return true;
  }
}

}  // namespace flowtrack
