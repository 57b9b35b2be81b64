// The state options of `flowtrack run` refused where they do not apply, and `flowtrack bench state`
// restoring every connection it saved.
#include <gtest/gtest.h>

#include <sstream>

#include "support/cli_runner.hpp"

namespace flowtrack {
namespace {

using testing::first_json_object;
using testing::run_cli;

TEST(StateCli, TheStateOptionsAreRefusedWhereTheyDoNotApply) {
  const auto start_empty_alone = run_cli("run --nf nat --config x.toml --dpdk \"-l 0\" --start-empty");
  EXPECT_EQ(start_empty_alone.exit_code, 2) << start_empty_alone.output;
  EXPECT_NE(start_empty_alone.output.find("needs --state FILE"), std::string::npos) << start_empty_alone.output;
  for (const char* args : {"run --nf nat --config x.toml --in x.pcap --state nat.state",
                           "run --nf slb --config x.toml --dpdk \"-l 0\" --state slb.state"}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("--state keeps the state of a live nat or lb"), std::string::npos) << r.output;
  }
}

TEST(StateCli, BenchStateRestoresEveryConnectionItSaved) {
  const auto r = run_cli("bench state --connections 2000 --reps 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t rows = 0;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"restored\"") == std::string::npos) continue;
    const auto row = first_json_object(line);
    EXPECT_EQ(row["restored"], row["connections"]) << line;
    EXPECT_GT(row["bytes"].get<std::size_t>(), 48u);
    ++rows;
  }
  EXPECT_EQ(rows, 2u) << "nat and lb: " << r.output;
}

}  // namespace
}  // namespace flowtrack
