// Flow tables by name, so the CLI, the benchmarks and the network functions pick one at run time.
// A table's name is its kName; adding a table here makes it selectable everywhere.
#pragma once

#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"
#include "flowtrack/table/dpdk_table.hpp"
#include "flowtrack/table/libcuckoo_table.hpp"
#include "flowtrack/table/map_adapter.hpp"
#include "flowtrack/table/robin_hood.hpp"

namespace flowtrack {

template <FlowKeyType Key>
using RegisteredTables =
    std::tuple<ChainedTable<Key>, StdMapTable<Key>, SwissTable<Key>, HopscotchTable<Key>, CuckooTable<Key>,
               CuckooTable<Key, CuckooPrefetch::both_buckets>,
               CuckooTable<Key, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>, CuckooPPTable<Key>,
               RobinHoodTable<Key>, DpdkTable<Key>,
               DpdkTable<Key, DpdkMode::rwlock>, DpdkTable<Key, DpdkMode::lock_free>, LibcuckooTable<Key>>;

// Calls fn(std::type_identity<Table>{}) for the table named `name`; false when no table has that name.
template <FlowKeyType Key, class Fn>
bool with_table(std::string_view name, Fn&& fn) {
  return [&]<class... Table>(std::type_identity<std::tuple<Table...>>) {
    return ((Table::kName == name ? (fn(std::type_identity<Table>{}), true) : false) || ...);
  }(std::type_identity<RegisteredTables<Key>>{});
}

inline std::vector<std::string> table_names() {
  return []<class... Table>(std::type_identity<std::tuple<Table...>>) {
    return std::vector<std::string>{std::string(Table::kName)...};
  }(std::type_identity<RegisteredTables<FlowKeyV4>>{});
}

}  // namespace flowtrack
