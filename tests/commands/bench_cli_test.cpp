// `flowtrack bench table` as a user runs it: every requested table, op and mode is reported with the
// fields the lab reads, and bad requests are refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "support/cli_runner.hpp"

namespace {

// The anchor table the ratios compare with: DPDK's rte_hash, or in a build without DPDK abseil's swiss table.
#ifdef FLOWTRACK_WITH_DPDK
const std::string kAnchor = "dpdk";
#else
const std::string kAnchor = "swiss";
#endif

std::string run(const std::string& arguments, int& exit_code) {
  const flowtrack::testing::CliResult result = flowtrack::testing::run_cli(arguments);
  exit_code = result.exit_code;
  return result.output;
}

TEST(BenchTableCli, JsonLinesCoverEveryRequestedCell) {
  int code = 0;
  const std::string output =
      run("bench table --tables cuckoo," + kAnchor + ",chained --sizes 4096 --loads 0.5,0.9 --reps 2 --json", code);
  ASSERT_EQ(code, 0) << output;
  std::set<std::string> cells;
  for (const nlohmann::json& j : flowtrack::testing::json_lines(output)) {
    const std::string line = j.dump();
    ASSERT_FALSE(j.contains("error")) << line;
    for (const char* field : {"table", "op", "mode", "size", "load", "cycles", "bytes_per_flow", "line_fetches",
                              "memory_working_set_bytes", "memory_dependent_cycles_per_line",
                              "memory_batched_cycles_per_line"}) {
      ASSERT_TRUE(j.contains(field)) << field << " missing in " << line;
    }
    // The memory limit beside each figure: measured over at least the largest table of the size.
    EXPECT_GT(j["memory_dependent_cycles_per_line"].get<double>(), 0.0) << line;
    EXPECT_GT(j["memory_batched_cycles_per_line"].get<double>(), 0.0) << line;
    EXPECT_GE(j["memory_working_set_bytes"].get<double>(), j["bytes_per_flow"].get<double>() * 4096 * j["load"].get<double>() - 64)
        << line;
    const double fetch = j["mode"] == "bulk" ? j["memory_batched_cycles_per_line"].get<double>()
                                             : j["memory_dependent_cycles_per_line"].get<double>();
    EXPECT_NEAR(j["line_fetches"].get<double>(), j["cycles"].get<double>() / fetch, 1e-6 * j["line_fetches"].get<double>()) << line;
    EXPECT_GT(j["cycles"].get<double>(), 0.0) << line;
    EXPECT_GT(j["bytes_per_flow"].get<double>(), 16.0) << line;  // at least the key itself
    EXPECT_EQ(j["reps"], 2);
    cells.insert(j["table"].get<std::string>() + "/" + j["op"].get<std::string>() + "/" + j["mode"].get<std::string>() +
                 "/" + std::to_string(j["load"].get<double>()));
  }
  // 3 tables x 2 loads x (insert, hit x2, miss x2, churn, erase)
  EXPECT_EQ(cells.size(), 3u * 2u * 7u);
}

TEST(BenchTableCli, TextEndsWithRatiosFromTheRun) {
  int code = 0;
  const std::string tables = kAnchor == "dpdk" ? "cuckoo,dpdk,swiss" : "cuckoo,swiss";
  const std::string output = run("bench table --tables " + tables + " --sizes 4096 --loads 0.9 --reps 1", code);
  ASSERT_EQ(code, 0) << output;
  if (kAnchor == "dpdk") {
    EXPECT_NE(output.find("cuckoo bulk hit vs dpdk bulk hit, size 4096 load 0.90"), std::string::npos) << output;
  }
  EXPECT_NE(output.find("cuckoo bulk hit vs swiss (abseil) find, size 4096 load 0.90"), std::string::npos) << output;
  EXPECT_NE(output.find("miss/hit"), std::string::npos);
  EXPECT_NE(output.find("memory limit"), std::string::npos) << output;
  EXPECT_NE(output.find("a dependent line fetch"), std::string::npos) << output;
}

TEST(BenchTableCli, UnknownTableIsRefused) {
  int code = 0;
  const std::string output = run("bench table --tables nosuchtable --sizes 4096 --loads 0.5 --reps 1", code);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("unknown table 'nosuchtable'"), std::string::npos) << output;
}

}  // namespace
