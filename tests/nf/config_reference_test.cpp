// The configuration reference (docs/guide/configuration.md) lists exactly the keys the reader accepts
// (nf/config_keys.hpp, which the reader checks every table against): a key added to the reader and not
// documented, or documented and not read, fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

#include "flowtrack/nf/config_keys.hpp"

namespace flowtrack {
namespace {

// Documented tables and their keys: a heading naming a table in backticks (`[lb]`, `[[service.backend]]`,
// or "The top level") opens it; each table row whose first cell is a key in backticks lists one key.
// Fenced code blocks are skipped (the example file's own [lb] is no heading).
std::map<std::string, std::set<std::string>> documented_keys(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  const std::regex table_heading(R"(^#+ .*`\[\[?([a-z_.]+)\]\]?`)");
  const std::regex key_row(R"(^\| `([a-z_0-9]+)` \|)");
  std::map<std::string, std::set<std::string>> tables;
  std::optional<std::string> table;
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced) continue;
    std::smatch m;
    if (line.rfind('#', 0) == 0) {
      table.reset();
      if (std::regex_search(line, m, table_heading)) table = m[1].str();
      if (line == "## The top level") table = "";
      if (table) tables[*table];
    } else if (table && std::regex_search(line, m, key_row)) {
      tables[*table].insert(m[1].str());
    }
  }
  return tables;
}

TEST(ConfigReference, ListsEveryTableAndKeyTheReaderAcceptsAndNoOther) {
  const std::string path = std::string(FLOWTRACK_SOURCE_DIR) + "/docs/guide/configuration.md";
  std::map<std::string, std::set<std::string>> documented = documented_keys(path);
  for (const ConfigTable& table : config_tables()) {
    const std::string label = table.name.empty() ? "the top level" : "[" + table.name + "]";
    const auto found = documented.find(table.name);
    if (found == documented.end()) {
      ADD_FAILURE() << path << " has no section for " << label;
      continue;
    }
    for (const std::string& key : table.keys) {
      EXPECT_TRUE(found->second.contains(key))
          << path << ": " << label << " lacks the key '" << key << "' the reader accepts";
    }
    for (const std::string& key : found->second) {
      EXPECT_TRUE(std::ranges::find(table.keys, key) != table.keys.end())
          << path << ": " << label << " documents '" << key << "', which the reader refuses";
    }
    documented.erase(found);
  }
  for (const auto& [name, keys] : documented) {
    ADD_FAILURE() << path << " documents a table [" << name << "] the reader refuses";
  }
}

TEST(ConfigReference, TheReaderKnowsEveryTableItsTopLevelNames) {
  for (const std::string& name : config_keys("")) EXPECT_NO_THROW(config_keys(name)) << name;
  EXPECT_THROW(config_keys("no_such_table"), std::out_of_range);
}

}  // namespace
}  // namespace flowtrack
