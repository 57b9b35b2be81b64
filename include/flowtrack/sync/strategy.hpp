// The scaling strategies by name, so the CLI and the benchmarks pick one at run time, and which tables
// each applies to. A strategy turns a table name into the type the workers share (or each own) and
// says where it lives:
//
//   sharded     any table, one per worker (Placement::sharded); no sharing at all
//   spinlock    any table, one for all, every call under a Spinlock           (locked_table.hpp)
//   spinlock-packet  the same, but a lookup burst locks once per packet (seed 002's setting)
//   rwlock      any table, one for all, std::shared_mutex                     (locked_table.hpp)
//   striped     chained only: per-bucket locks ("chained-striped", chained.hpp)
//   lockfree    cuckoo-lf or dpdk-lf ("cuckoo" and "dpdk" mean their lock-free modes here): lock-free
//               lookups, serialised writes, grace-period reuse of ids        (lock_free_table.hpp)
//   concurrent  a table that is many_writers by itself: libcuckoo
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "flowtrack/sync/locked_table.hpp"
#include "flowtrack/sync/lock_free_table.hpp"
#include "flowtrack/table/registry.hpp"

namespace flowtrack {

enum class Placement : std::uint8_t { sharded, shared };

inline std::vector<std::string> strategy_names() {
  return {"sharded", "spinlock", "spinlock-packet", "rwlock", "striped", "lockfree", "concurrent"};
}

// Calls fn(std::type_identity<T>{}, std::integral_constant<Placement, P>{}) for the strategy applied to
// the named table; false when the strategy is unknown or does not apply to that table.
template <FlowKeyType Key, class Fn>
bool with_strategy(std::string_view strategy, std::string_view table, Fn&& fn) {
  constexpr auto sharded = std::integral_constant<Placement, Placement::sharded>{};
  constexpr auto shared = std::integral_constant<Placement, Placement::shared>{};
  if (strategy == "sharded") {
    return with_table<Key>(table, [&]<class T>(std::type_identity<T> type) { fn(type, sharded); });
  }
  if (strategy == "spinlock") {
    return with_table<Key>(table, [&]<class T>(std::type_identity<T>) { fn(std::type_identity<SpinlockTable<T>>{}, shared); });
  }
  if (strategy == "spinlock-packet") {
    return with_table<Key>(table, [&]<class T>(std::type_identity<T>) { fn(std::type_identity<PacketSpinlockTable<T>>{}, shared); });
  }
  if (strategy == "rwlock") {
    return with_table<Key>(table, [&]<class T>(std::type_identity<T>) { fn(std::type_identity<RwLockTable<T>>{}, shared); });
  }
  if (strategy == "striped") {
    if (table != "chained" && table != "chained-striped") return false;
    fn(std::type_identity<ChainedTable<Key, ChainLocking::striped>>{}, shared);
    return true;
  }
  if (strategy == "lockfree") {
    if (table == "cuckoo" || table == "cuckoo-lf") {
      fn(std::type_identity<LockFreeTable<CuckooTable<Key, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>>{}, shared);
      return true;
    }
    if (table == "dpdk" || table == "dpdk-lf") {
      fn(std::type_identity<LockFreeTable<DpdkTable<Key, DpdkMode::lock_free>>>{}, shared);
      return true;
    }
    return false;
  }
  if (strategy == "concurrent") {
    if (table != "libcuckoo") return false;
    fn(std::type_identity<LibcuckooTable<Key>>{}, shared);
    return true;
  }
  return false;
}

}  // namespace flowtrack
