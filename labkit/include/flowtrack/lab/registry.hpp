// Flow tables by name, so the CLI, the benchmarks and the network functions pick one at run time.
// A table's name is its kName; adding a table here makes it selectable everywhere.
//
// The CLI's table-generic code is instantiated for the tables of this build's grid only
// (labkit/CMakeLists.txt, FLOWTRACK_GRID): every registered table, or a representative subset. The grid
// has two uses: the tables bench table measures (FLOWTRACK_GRID_TABLES), and the narrower set the
// network functions and bench scale's strategies are instantiated over (FLOWTRACK_GRID_FUNCTION_TABLES,
// a subset of the first: each of its tables costs every function x aging x scaling). with_table(),
// table_names() and grid_subset() take the use; registered_table_names() sees every table, so that a
// table left out of the grid gets its own error message, not "unknown". A build without DPDK
// (FLOWTRACK_WITH_DPDK off) registers no rte_hash table.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "flowtrack/lab/libcuckoo_table.hpp"
#include "flowtrack/lab/map_adapter.hpp"
#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"
#include "flowtrack/table/robin_hood.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack {

template <FlowKeyType Key>
using RegisteredTables =
    std::tuple<ChainedTable<Key>, StdMapTable<Key>, SwissTable<Key>, HopscotchTable<Key>, CuckooTable<Key>,
               CuckooTable<Key, CuckooPrefetch::both_buckets>,
               CuckooTable<Key, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>, CuckooPPTable<Key>,
               RobinHoodTable<Key>,
#ifdef FLOWTRACK_WITH_DPDK
               DpdkTable<Key>, DpdkTable<Key, DpdkMode::rwlock>, DpdkTable<Key, DpdkMode::lock_free>,
#endif
               LibcuckooTable<Key>>;

// Comma-separated names; empty: every registered table.
#ifdef FLOWTRACK_GRID_TABLES
inline constexpr std::string_view kGridTables = FLOWTRACK_GRID_TABLES;
#else
inline constexpr std::string_view kGridTables;
#endif
#ifdef FLOWTRACK_GRID_FUNCTION_TABLES
inline constexpr std::string_view kGridFunctionTables = FLOWTRACK_GRID_FUNCTION_TABLES;
#else
inline constexpr std::string_view kGridFunctionTables;
#endif

// What a table of the grid is instantiated for: bench table's measurements, or the network functions
// and bench scale's strategies.
enum class GridUse { tables, functions };

constexpr bool in_name_list(std::string_view list, std::string_view name) {
  if (list.empty()) return true;
  for (;;) {
    const std::size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) return false;
    list.remove_prefix(comma + 1);
  }
}

// The function tables are always among the grid's tables, whatever the two lists say.
constexpr bool in_grid(std::string_view name, GridUse use = GridUse::tables) {
  return in_name_list(kGridTables, name) && (use == GridUse::tables || in_name_list(kGridFunctionTables, name));
}

// Calls fn(std::type_identity<Table>{}) for the grid's table named `name`; false when the grid has no
// table of that name for that use. Only those tables are instantiated.
template <FlowKeyType Key, GridUse Use = GridUse::tables, class Fn>
bool with_table(std::string_view name, Fn&& fn) {
  return [&]<class... Table>(std::type_identity<std::tuple<Table...>>) {
    const auto visit = [&]<class T>(std::type_identity<T> type) {
      if constexpr (in_grid(T::kName, Use)) {
        if (T::kName == name) {
          fn(type);
          return true;
        }
      }
      return false;
    };
    return (visit(std::type_identity<Table>{}) || ...);
  }(std::type_identity<RegisteredTables<Key>>{});
}

// The grid's tables for that use, in registry order.
inline std::vector<std::string> table_names(GridUse use = GridUse::tables) {
  return [use]<class... Table>(std::type_identity<std::tuple<Table...>>) {
    std::vector<std::string> names;
    const auto add = [&](std::string_view name) {
      if (in_grid(name, use)) names.emplace_back(name);
    };
    (add(Table::kName), ...);
    return names;
  }(std::type_identity<RegisteredTables<FlowKeyV4>>{});
}

// The names of `names` that this build's grid has for that use, in their order (a table of a library
// this build is without, DPDK's, is in no grid).
inline std::vector<std::string> grid_subset(std::vector<std::string> names, GridUse use) {
  const std::vector<std::string> grid = table_names(use);
  std::erase_if(names, [&](const std::string& name) { return std::ranges::find(grid, name) == grid.end(); });
  return names;
}

inline std::vector<std::string> registered_table_names() {
  return []<class... Table>(std::type_identity<std::tuple<Table...>>) {
    return std::vector<std::string>{std::string(Table::kName)...};
  }(std::type_identity<RegisteredTables<FlowKeyV4>>{});
}

// The concurrency a registered table promises, whether or not the grid has it; nullopt for no table.
constexpr std::optional<Concurrency> table_concurrency(std::string_view name) {
  return []<class... Table>(std::string_view wanted, std::type_identity<std::tuple<Table...>>) {
    std::optional<Concurrency> found;
    static_cast<void>(((Table::kName == wanted ? (found = Table::kConcurrency, true) : false) || ...));
    return found;
  }(name, std::type_identity<RegisteredTables<FlowKeyV4>>{});
}

// The message for a table name that with_table() does not know for that use: unknown, or left out of
// this build.
std::string unknown_table_message(std::string_view name, GridUse use = GridUse::tables);

}  // namespace flowtrack
