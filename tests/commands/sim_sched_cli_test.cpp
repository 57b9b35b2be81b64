// `flowtrack sim sched` and `sim afd` as a user runs them: one JSON object per run with the fields the
// lab reads, and bad requests refused with a message and a non-zero exit.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "support/cli_runner.hpp"

namespace {

using flowtrack::testing::json_lines;
using flowtrack::testing::run_cli;

const std::string kSmallRun = "sim sched --zipf-flows 2000 --zipf-packets 20000 --duration-s 0.01 --json";

TEST(SimSchedCli, OneJsonObjectPerPolicyWithTheFieldsTheLabReads) {
  const auto result = run_cli(kSmallRun + " --policy laps,afs,fcfs,rss,ideal");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::set<std::string> policies;
  for (const auto& j : json_lines(result.output)) {
    for (const char* field : {"policy", "offered_mpps", "throughput_mpps", "drops", "out_of_order", "migrations", "packets"}) {
      ASSERT_TRUE(j.contains(field)) << field << " missing in " << j.dump();
    }
    EXPECT_EQ(j["packets"].get<std::uint64_t>(), j["delivered"].get<std::uint64_t>() + j["drops"].get<std::uint64_t>());
    policies.insert(j["policy"].get<std::string>());
  }
  EXPECT_EQ(policies, (std::set<std::string>{"laps", "afs", "fcfs", "rss", "ideal"}));
}

TEST(SimSchedCli, AnOfferedLoadSweepGivesOneRunPerPoint) {
  const auto result = run_cli(kSmallRun + " --policy laps --offered 1,2,3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(json_lines(result.output).size(), 3u);
}

TEST(SimSchedCli, BadRequestsAreRefusedWithAMessage) {
  const struct {
    const char* arguments;
    const char* message;
  } cases[] = {
      {"sim sched --policy roundrobin --duration-s 0.01", "unknown policy 'roundrobin'"},
      {"sim sched --scenario T9 --duration-s 0.01", "unknown scenario 'T9'"},
      {"sim sched --rates sometimes --duration-s 0.01", "unknown rates 'sometimes'"},
      {"sim sched --offered -3 --duration-s 0.01", "--offered must be in"},
      {"sim sched --duration-s 0", "--duration-s must be in"},
      {"sim sched --idle-us 1e300 --duration-s 0.01", "--idle-us must be in"},
      {"sim sched --trace pcap --duration-s 0.01", "--trace pcap needs --pcap"},
      {"sim sched --trace pcap --pcap /nonexistent.pcap --duration-s 0.01", "nonexistent"},
      {"sim afd --sampling 2", "--sampling values must be in"},
      {"sim afd --annex 100", "annex 100 is neither at most 8 nor a multiple of 8"},
      {"sim afd --zipf-flows 100 --zipf-packets 1000 --window 5000", "--window 5000 is longer than the trace"},
      {"sim sched --annex 100 --duration-s 0.01", "the annex holds up to 8 entries or a multiple of 8"},
  };
  for (const auto& c : cases) {
    const auto result = run_cli(c.arguments);
    EXPECT_NE(result.exit_code, 0) << c.arguments;
    EXPECT_NE(result.output.find(c.message), std::string::npos) << c.arguments << "\n" << result.output;
  }
}

TEST(SimSchedCli, ABrokenPcapIsAnErrorNotACrash) {
  const std::string path = ::testing::TempDir() + "/broken_sim.pcap";
  {
    std::ofstream out(path, std::ios::binary);
    out << "this is not a capture file at all";
  }
  const auto result = run_cli("sim sched --trace pcap --pcap " + path + " --duration-s 0.01");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("error"), std::string::npos) << result.output;
  std::remove(path.c_str());
}

TEST(SimAfdCli, FalsePositivesForEachAnnexSize) {
  const auto result = run_cli("sim afd --zipf-flows 5000 --zipf-packets 50000 --annex 0,512 --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto rows = json_lines(result.output);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& j : rows) EXPECT_LE(j["false_positive_rate"].get<double>(), 1.0);
}

TEST(SimAfdCli, AccuracyForEachWindow) {
  const auto result = run_cli("sim afd --zipf-flows 5000 --zipf-packets 50000 --annex 512 --window 1000,10000 --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto rows = json_lines(result.output);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["checks"].get<std::uint64_t>(), 50u);
  EXPECT_EQ(rows[1]["checks"].get<std::uint64_t>(), 5u);
  for (const auto& j : rows) EXPECT_LE(j["accuracy_mean"].get<double>(), 1.0);
}

TEST(SimSchedCli, MigrationCensusHistogramsCoverEveryMigration) {
  const auto result = run_cli("sim sched --policy laps --duration-s 0.02 --zipf-flows 5000 --zipf-packets 40000 --migration-census --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto rows = json_lines(result.output);
  ASSERT_EQ(rows.size(), 1u);
  std::uint64_t censuses = 0;
  for (const auto& n : rows[0]["flows_at_migration"]) censuses += n.get<std::uint64_t>();
  EXPECT_EQ(censuses, rows[0]["migrations"].get<std::uint64_t>());
  EXPECT_EQ(rows[0]["sampling"].get<double>(), 0.1);
}

}  // namespace
