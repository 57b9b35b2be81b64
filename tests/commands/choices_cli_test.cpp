// `flowtrack choices`: two instances' configurations that list one pool in different orders and reach
// it by different histories print the same choices for the same tuples (from a file, or the tuples of a
// capture), which the diff of their outputs shows; another deployment key prints other choices under
// another fingerprint; what cannot be compared (another policy) and malformed input are refused with
// the file and line at fault.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "campus_configs.hpp"
#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace choices_cli_test {

using testing::campus_backend;
using testing::campus_service;
using testing::run_cli;

class ChoicesCli : public testing::ScratchSuite<ChoicesCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("choices");
    secret("deployment.key", "a secret every instance shares");
    secret("other.key", "another deployment's own secret");
    // Instance a lists b1..b4 and removes b4, b3 takes weight 2; instance b lists b3 (weight 2), b2 and
    // b1, adds b5 and takes it down. Both end with b1, b2, b3 (weight 2) taking connections.
    write("a.toml", config("deployment.key", {"b1", "b2", "b3", "b4", "b5"}, {1, 1, 1, 1, 1}));
    write("a.history", "# instance a\nremove web b4\nweight web b3 2\n\ndown web b5  # its health check failed\n");
    write("b.toml", config("deployment.key", {"b3", "b2", "b1"}, {2, 1, 1}));
    write("b.history", "add web b5 10.200.0.5 0 1\ndown web b5\n");
    write("other.toml", config("other.key", {"b3", "b2", "b1"}, {2, 1, 1}));
    std::string tuples;
    for (int n = 0; n < 2000; ++n) tuples += fmt::format("10.0.{}.{}:{} -> 198.18.0.1:443 tcp\n", n % 7, n % 250 + 1, 20000 + n);
    tuples += "10.0.0.1:40000 -> 198.18.0.9:443 tcp\n";  // to no service
    write("tuples.txt", tuples);
    const auto gen = run_cli("trace gen --profile campus --flows 300 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }

  static void write(const std::string& name, const std::string& text) { std::ofstream(path(name)) << text; }
  static void secret(const std::string& name, const std::string& text) {
    write(name, text);
    std::filesystem::permissions(path(name), std::filesystem::perms::owner_read);
  }
  static std::string config(const std::string& key, const std::vector<std::string>& names, const std::vector<int>& weights,
                            const std::string& policy = "maglev") {
    std::string backends;
    for (std::size_t i = 0; i < names.size(); ++i) {
      backends += campus_backend(names[i], fmt::format("10.200.0.{}", names[i].back() - '0'), fmt::format("  weight = {}\n", weights[i]));
    }
    return fmt::format("[lb]\npolicy = \"{}\"\ndeployment_key = \"{}\"\n", policy, path(key)) +
           campus_service("web", "[443, 80]", "tcp", "forward = \"ipip\"\ntunnel_source = \"10.200.255.1\"\n", backends);
  }
  static testing::CliResult choices(const std::string& instance, const std::string& input) {
    const std::string history = std::filesystem::exists(path(instance + ".history")) ? " --history " + path(instance + ".history") : "";
    return run_cli("choices --config " + path(instance + ".toml") + history + " " + input);
  }
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
};

TEST_F(ChoicesCli, TwoInstancesReachingOnePoolDifferentlyPrintTheSameChoices) {
  const auto a = choices("a", "--tuples " + path("tuples.txt"));
  const auto b = choices("b", "--tuples " + path("tuples.txt"));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_EQ(a.output, b.output);
  const std::vector<std::string> printed = lines(a.output);
  ASSERT_EQ(printed.size(), 2002u);
  EXPECT_EQ(printed[0].rfind("# deployment key ", 0), 0u);
  EXPECT_EQ(printed[1].rfind("10.0.0.1:20000 -> 198.18.0.1:443 tcp web b", 0), 0u) << printed[1];
  EXPECT_EQ(printed.back(), "10.0.0.1:40000 -> 198.18.0.9:443 tcp - -");
  // b4 is gone and b5 down: only b1, b2 and b3 are chosen, b3 about twice as often as each other.
  std::map<std::string, int> chosen;
  for (std::size_t i = 1; i + 1 < printed.size(); ++i) chosen[printed[i].substr(printed[i].rfind(' ') + 1)]++;
  ASSERT_EQ(chosen.size(), 3u) << a.output.substr(0, 400);
  EXPECT_NEAR(chosen["b3"], 1000, 100);
  EXPECT_NEAR(chosen["b1"], 500, 100);
}

TEST_F(ChoicesCli, AnotherKeyPrintsAnotherFingerprintAndOtherChoices) {
  const std::vector<std::string> a = lines(choices("a", "--tuples " + path("tuples.txt")).output);
  const std::vector<std::string> other = lines(choices("other", "--tuples " + path("tuples.txt")).output);
  ASSERT_EQ(a.size(), other.size());
  EXPECT_NE(a[0], other[0]);
  int differ = 0;
  for (std::size_t i = 1; i < a.size(); ++i) differ += a[i] != other[i];
  // Two independent choices by the shares (1, 1, 2)/4 differ with probability 1 - 6/16.
  EXPECT_NEAR(differ, 2000 * 10 / 16, 120);
  EXPECT_EQ(a[0].find("secret"), std::string::npos);
}

TEST_F(ChoicesCli, ACaptureGivesEachDistinctTupleToAServiceOnceAndTheInstancesAgreeOnIt) {
  const auto a = choices("a", "--pcap " + path("campus.pcap"));
  const auto b = choices("b", "--pcap " + path("campus.pcap"));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(a.output, b.output);
  const std::vector<std::string> printed = lines(a.output);
  ASSERT_GT(printed.size(), 20u);
  std::set<std::string> distinct(printed.begin() + 1, printed.end());
  EXPECT_EQ(distinct.size(), printed.size() - 1);
  for (std::size_t i = 1; i < printed.size(); ++i) EXPECT_NE(printed[i].find(" tcp web b"), std::string::npos) << printed[i];
}

// A run of the command that exits with status 2 and says `why`.
void expect_refused(const testing::CliResult& result, const std::string& why) {
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find(why), std::string::npos) << result.output;
}

TEST_F(ChoicesCli, WhatCannotBeComparedOrReadIsRefusedByFileAndLine) {
  write("rr.toml", config("deployment.key", {"b1"}, {1}, "round_robin"));
  expect_refused(choices("rr", "--tuples " + path("tuples.txt")), "lb.deployment_key: instances choose alike by maglev only");
  write("bad-tuples.txt", "10.0.0.1:1 -> 198.18.0.1:443 tcp\n10.0.0.1 -> 198.18.0.1:443 tcp\n");
  expect_refused(choices("a", "--tuples " + path("bad-tuples.txt")), "bad-tuples.txt:2: expected SRC:PORT -> DST:PORT");
  write("c.toml", config("deployment.key", {"b1"}, {1}));
  write("c.history", "drain web b1\ncounters\n");
  expect_refused(choices("c", "--tuples " + path("tuples.txt")), "c.history:2: not a pool change");
  write("c.history", "drain web b7\n");
  expect_refused(choices("c", "--tuples " + path("tuples.txt")), "change 1: backend: service 'web' has no backend 'b7'");
  expect_refused(run_cli("choices --config " + path("a.toml")), "either --tuples FILE or --pcap FILE");
}

}  // namespace choices_cli_test
}  // namespace flowtrack
