// The keys each table of a configuration file accepts (nf_config.cpp, dataplane_config.hpp): the one
// list the reader checks every table against, and that the configuration reference is checked against
// (docs/guide/configuration.md, tests/nf/config_reference_test.cpp). A key is added here and read there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flowtrack {

struct ConfigTable {
  std::string name;               // "" for the top level; "service.backend" for [[service.backend]]
  std::vector<std::string> keys;  // what the table may hold, its sub-tables included
};

// Every table a configuration file may hold, the top level first.
const std::vector<ConfigTable>& config_tables();

// The keys of the table named `name`; throws std::out_of_range for a name config_tables() lacks.
const std::vector<std::string>& config_keys(std::string_view name);

}  // namespace flowtrack
