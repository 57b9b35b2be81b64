// The connection tables a stateful function may run on: the function grid's single-thread tables. A
// function instance is used by one worker at a time (sharded) or under one lock (spinlock), so a
// table's own concurrency (cuckoo-lf, dpdk-rwlock, dpdk-lf, libcuckoo) would buy nothing and cost
// instantiations.
#pragma once

#include <stdexcept>
#include <fmt/format.h>

#include <string_view>
#include <type_traits>

#include "flowtrack/lab/registry.hpp"

namespace flowtrack::cli {

// Calls fn(std::type_identity<Table>{}) for the function's table named `name`; throws std::invalid_argument when
// there is none.
template <class Fn>
void with_function_table(std::string_view name, Fn&& fn) {
  const auto concurrency = table_concurrency(name);
  if (concurrency && *concurrency != Concurrency::single_thread) {
    throw std::invalid_argument(fmt::format("table {} is a {} table; a function never uses a table's own concurrency: each worker "
                                "has its own instance, or one instance is locked whole (--scaling spinlock)",
                                name, *concurrency == Concurrency::many_writers ? "many-writer" : "single-writer many-reader"));
  }
  const bool known = with_table<FlowKeyV4, GridUse::functions>(name, [&]<class Table>(std::type_identity<Table> type) {
    if constexpr (Table::kConcurrency == Concurrency::single_thread) fn(type);
  });
  if (!known) throw std::invalid_argument(unknown_table_message(name, GridUse::functions));
}

}  // namespace flowtrack::cli
