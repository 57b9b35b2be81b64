// The burst data plane's promise at the command line (runtime/burst_loop.hpp): a function's output does
// not depend on how the trace is cut into bursts. For every function, every connection table a stateful
// function takes in this build's grid, both tracker agings, on one and two workers (sharded: each
// worker's instance sees its packets in trace order), `run --burst 1` (the per-packet path) and
// `run --burst 32` write the same capture, byte for byte; and so do the load balancers in tunnel mode.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "campus_configs.hpp"
#include "flowtrack/lab/registry.hpp"
#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

class BurstCli : public testing::ScratchSuite<BurstCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("burst");
    const auto gen = run_cli("trace gen --profile campus --flows 150 --windows 2 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    std::ofstream(path("lb.toml")) << testing::campus_lb_config("least_connections", 2000);
    std::ofstream(path("nat.toml")) << testing::campus_nat_config(2000);
    // A path too narrow for the largest UDP packets once encapsulated: they are counted as too_big.
    std::ofstream(path("lb-ipip.toml")) << testing::campus_tunnel_lb_config("ipip", 1000);
    std::ofstream(path("lb-gue.toml")) << testing::campus_tunnel_lb_config("gue");
  }
  static std::string contents(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // The capture `run` writes with `args` in bursts of `burst`.
  static std::string output(const std::string& args, std::size_t burst) {
    const std::string out = path("out-" + std::to_string(burst) + ".pcap");
    const auto r = run_cli("run --in " + path("campus.pcap") + " --out " + out + " --burst " + std::to_string(burst) + " " + args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.output;
    return contents(out);
  }
  static void expect_same_in_bursts_of_one_and_32(const std::string& args) {
    const std::string one = output(args, 1);
    ASSERT_GT(one.size(), 1000u) << args;
    EXPECT_TRUE(one == output(args, 32)) << args;
  }
};

TEST_F(BurstCli, StatelessFunctionsWriteTheSameCaptureInBurstsOfOneAndOf32) {
  for (const std::string workers : {"1", "2"}) {
    expect_same_in_bursts_of_one_and_32("--nf fwd --workers " + workers);
    expect_same_in_bursts_of_one_and_32("--nf slb --config " + std::string(FLOWTRACK_SOURCE_DIR "/examples/slb.toml") +
                                        " --workers " + workers);
  }
}

TEST_F(BurstCli, ConcuryWritesTheSameCaptureInBurstsOfOneAndOf32AcrossPoolChanges) {
  for (const std::string workers : {"1", "2"}) {
    expect_same_in_bursts_of_one_and_32("--nf concury --config " + std::string(FLOWTRACK_SOURCE_DIR "/examples/lb.toml") +
                                        " --workers " + workers);
  }
}

// Tunnel mode: every balancer, IPIP and GUE, the answers left out of the replay (they go to the clients
// directly), on the connection table of the default run.
TEST_F(BurstCli, TunnelModesWriteTheSameCaptureInBurstsOfOneAndOf32) {
  for (const std::string workers : {"1", "2"}) {
    for (const std::string forward : {"ipip", "gue"}) {
      expect_same_in_bursts_of_one_and_32("--nf lb --config " + path("lb-" + forward + ".toml") + " --workers " + workers);
    }
    for (const std::string nf : {"slb", "concury"}) {
      expect_same_in_bursts_of_one_and_32("--nf " + nf + " --config " + std::string(FLOWTRACK_SOURCE_DIR "/examples/lb-tunnel.toml") +
                                          " --workers " + workers);
    }
  }
}

// One (function, aging) pair per test, so that ctest runs them side by side. Under the sanitizers on two
// workers only (each worker's instance runs the one-worker path on its share; 7 s a pair under ASan
// with both, for the CI budget): the release tree runs both.
#ifdef FLOWTRACK_SANITIZED
const std::vector<std::string> kStatefulWorkers = {"2"};
#else
const std::vector<std::string> kStatefulWorkers = {"1", "2"};
#endif
class StatefulBurstCli : public BurstCli, public ::testing::WithParamInterface<std::tuple<std::string, std::string>> {};

TEST_P(StatefulBurstCli, WritesTheSameCaptureInBurstsOfOneAndOf32OnEveryTable) {
  const auto& [nf, aging] = GetParam();
  std::size_t tables = 0;
  for (const std::string& table : table_names(GridUse::functions)) {
    if (table_concurrency(table) != Concurrency::single_thread) continue;  // not a function's table
    ++tables;
    for (const std::string& workers : kStatefulWorkers) {
      expect_same_in_bursts_of_one_and_32("--nf " + nf + " --config " + path(nf + ".toml") + " --table " + table +
                                          " --aging " + aging + " --workers " + workers);
    }
  }
  // The representative function grid at least: our cuckoo and chained tables (labkit/CMakeLists.txt).
  EXPECT_GE(tables, 2u);
}

INSTANTIATE_TEST_SUITE_P(FunctionsAndAgings, StatefulBurstCli,
                         ::testing::Combine(::testing::Values("lb", "nat"), ::testing::Values("wheel", "heap")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace flowtrack
