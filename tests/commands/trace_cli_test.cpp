// The CLI as a user meets it: real processes, real files, exit codes and messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace {

using Result = flowtrack::testing::CliResult;

Result run(const std::string& arguments) { return flowtrack::testing::run_cli(arguments); }

class TraceCli : public flowtrack::testing::ScratchSuite<TraceCli> {
 protected:
  static void SetUpTestSuite() { make_scratch("trace"); }
};

TEST_F(TraceCli, GenThenStatsReportsTheRequestedFlows) {
  const auto gen = run("trace gen --profile campus --flows 5000 --seed 7 -o " + path("c.pcap"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const auto stats = run("trace stats --json " + path("c.pcap"));
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  const auto json = nlohmann::json::parse(stats.output);
  EXPECT_EQ(json["flows"], 5000);
  EXPECT_GT(json["packets"].get<long>(), 5000 * 2);
  EXPECT_GT(json["bytes"].get<long>(), 0);
  EXPECT_GT(json["max_concurrent_flows"].get<long>(), 0);
  EXPECT_LE(json["max_concurrent_flows"].get<long>(), 5000);
}

TEST_F(TraceCli, EveryProfileAndFormat) {
  for (const std::string profile : {"uniform", "zipf", "campus"}) {
    for (const std::string format : {"pcap", "pcapng"}) {
      const std::string file = path(profile + "." + format);
      const auto gen = run("trace gen --profile " + profile + " --flows 300 --format " + format + " -o " + file);
      ASSERT_EQ(gen.exit_code, 0) << gen.output;
      const auto stats = run("trace stats --json " + file);
      ASSERT_EQ(stats.exit_code, 0) << stats.output;
      EXPECT_EQ(nlohmann::json::parse(stats.output)["flows"], 300) << profile << " " << format;
    }
  }
}

TEST_F(TraceCli, WindowsMultiplyConnections) {
  ASSERT_EQ(run("trace gen --profile campus --flows 1000 --windows 4 -o " + path("w.pcap")).exit_code, 0);
  const auto stats = run("trace stats --json " + path("w.pcap"));
  EXPECT_EQ(nlohmann::json::parse(stats.output)["flows"], 4000);
}

TEST_F(TraceCli, ErrorsAreOneClearLineAndNonZero) {
  auto missing = run("trace stats " + path("absent.pcap"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("absent.pcap"), std::string::npos) << missing.output;

  std::ofstream(path("junk.pcap")) << "this is not a capture file at all, not even close";
  auto junk = run("trace stats " + path("junk.pcap"));
  EXPECT_NE(junk.exit_code, 0);
  EXPECT_NE(junk.output.find("error"), std::string::npos) << junk.output;

  auto bad_profile = run("trace gen --profile nope -o " + path("x.pcap"));
  EXPECT_NE(bad_profile.exit_code, 0);
  auto bad_flows = run("trace gen --flows 0 -o " + path("x.pcap"));
  EXPECT_NE(bad_flows.exit_code, 0);
  auto no_output = run("trace gen --flows 10");
  EXPECT_NE(no_output.exit_code, 0);
  auto unwritable = run("trace gen --flows 10 -o /nonexistent/dir/x.pcap");
  EXPECT_NE(unwritable.exit_code, 0);
  EXPECT_EQ(std::count(unwritable.output.begin(), unwritable.output.end(), '\n'), 1) << unwritable.output;
}

}  // namespace
