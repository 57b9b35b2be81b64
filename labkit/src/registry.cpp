#include "flowtrack/lab/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace flowtrack {

std::string unknown_table_message(std::string_view name, GridUse use) {
  const std::vector<std::string> all = registered_table_names();
  if (std::ranges::find(all, name) != all.end()) {
    return fmt::format("table '{}' is not built into this binary {}(its grid has {}; build with FLOWTRACK_GRID=full)", name,
                       use == GridUse::functions ? "for the network functions and scaling strategies " : "",
                       fmt::join(table_names(use), ", "));
  }
  return fmt::format("unknown table '{}' (tables: {})", name, fmt::join(table_names(use), ", "));
}

}  // namespace flowtrack
