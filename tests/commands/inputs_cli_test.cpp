// What the CLI takes in and gives out, as a user meets it: no silent loss (a failed write of --out,
// trace gen -o or standard output is an error with a non-zero exit), no silent nonsense (every
// function reads its configuration; a directory is refused by name, a pipe read whole; a
// contradiction names file and line, and so does a list past its bound; numbers outside their ranges
// are refused with the range; one bound on workers for every command), configurations refused before
// they hurt (more memory than the machine has; a slow build announced), and a stop signal during a
// live run's set-up ends it at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

class InputsCli : public testing::ScratchSuite<InputsCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("inputs");
    const auto gen = run_cli("trace gen --profile campus --flows 200 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  static std::string example(const std::string& name) { return std::string(FLOWTRACK_SOURCE_DIR) + "/examples/" + name; }
  // The CLI's path, for a shell line that runs it after another command.
  static std::string cli() {
    const char* cli = std::getenv("FLOWTRACK_CLI");
    return cli != nullptr ? cli : FLOWTRACK_CLI_PATH;
  }
  static std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  }
};

TEST_F(InputsCli, AFailedWriteOfAnyOutputIsAnError) {
  for (const char* format : {"pcap", "pcapng"}) {
    const auto r = run_cli("run --nf fwd --in " + path("campus.pcap") + " --out /dev/full --out-format " + format);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("flowtrack: error: /dev/full: write failed: No space left on device"), std::string::npos) << r.output;
  }
  const auto gen = run_cli("trace gen --profile campus --flows 200 -o /dev/full");
  EXPECT_EQ(gen.exit_code, 2) << gen.output;
  EXPECT_NE(gen.output.find("/dev/full: write failed"), std::string::npos) << gen.output;
  // Standard output on a full device: the report is lost, and the exit status says so.
  const auto report = run_cli("run --nf fwd --in " + path("campus.pcap") + " --json 2> " + path("stderr") +
                              " > /dev/full; status=$?; cat " + path("stderr") + "; exit $status");
  EXPECT_EQ(report.exit_code, 1) << report.output;
  EXPECT_NE(report.output.find("flowtrack: error: writing the standard output failed"), std::string::npos) << report.output;
}

TEST_F(InputsCli, EveryFunctionReadsItsConfigurationOrRefusesIt) {
  for (const std::string nf : {"fwd", "slb", "lb", "nat"}) {
    const auto missing = run_cli("run --nf " + nf + " --config /no/such/file --in " + path("campus.pcap"));
    EXPECT_EQ(missing.exit_code, 2) << nf << ": " << missing.output;
    EXPECT_NE(missing.output.find("/no/such/file: cannot open: No such file or directory"), std::string::npos) << missing.output;
    const std::string dir = std::filesystem::path(path("campus.pcap")).parent_path().string();
    const auto directory = run_cli("run --nf " + nf + " --config " + dir + " --in " + path("campus.pcap"));
    EXPECT_EQ(directory.exit_code, 2) << nf << ": " << directory.output;
    EXPECT_NE(directory.output.find(dir + ": a directory, not a configuration file"), std::string::npos) << directory.output;
  }
  const auto fwd = run_cli("run --nf fwd --config " + write("bad.toml", "[fwd\n") + " --in " + path("campus.pcap"));
  EXPECT_EQ(fwd.exit_code, 2) << fwd.output;
  EXPECT_NE(fwd.output.find("not valid TOML"), std::string::npos) << fwd.output;
  EXPECT_EQ(run_cli("run --nf fwd --config " + example("fwd.toml") + " --in " + path("campus.pcap")).exit_code, 0);
}

// `--config <(cat lb.toml)`: a pipe, read to its end without seeking.
TEST_F(InputsCli, APipeIsReadAsTheConfiguration) {
  const auto r = run_cli("--version > /dev/null; bash -c '" + cli() + " run --nf lb --config <(cat " + example("lb.toml") + ") --in " +
                         path("campus.pcap") + " --json'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto report = testing::first_json_object(r.output);
  ASSERT_FALSE(report.is_null()) << r.output;
  EXPECT_GT(report["connections"].get<std::uint64_t>(), 0u) << r.output;
}

TEST_F(InputsCli, AContradictionNamesFileAndLine) {
  const std::string config = write("twice.toml",
                                   "[[service]]\nname = \"web\"\nvip = \"198.18.0.1\"\nport = 443\n  [[service.backend]]\n  name = \"a\"\n"
                                   "  address = \"10.200.0.1\"\n[[service]]\nname = \"api\"\nvip = \"198.18.0.1\"\nport = 443\n"
                                   "  [[service.backend]]\n  name = \"b\"\n  address = \"10.200.0.2\"\n");
  const auto r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("twice.toml:10: service.vip: 198.18.0.1 port 443 tcp is service 'web''s (line 3) already"), std::string::npos)
      << r.output;
}

// The bound on a replay's scheduled pool changes: one [[change]] table past it is refused by its line.
TEST_F(InputsCli, MoreScheduledChangesThanTheBoundAreRefusedByLine) {
  std::string changes = "[[service]]\nname = \"web\"\nvip = \"198.18.0.1\"\nport = 443\n  [[service.backend]]\n  name = \"web-1\"\n"
                        "  address = \"10.200.0.1\"\n";
  for (int i = 0; i <= 10000; ++i) changes += "[[change]]\nat=1\nservice=\"web\"\nbackend=\"web-1\"\naction=\"drain\"\n";
  const auto r = run_cli("run --nf lb --config " + write("changes.toml", changes) + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // Line 8 starts the first change, five lines each: the one past the bound starts on 8 + 5 * 10000.
  EXPECT_NE(r.output.find("changes.toml:50008: change: 10001 [[change]] tables: at most 10000"), std::string::npos) << r.output;
}

TEST_F(InputsCli, TraceGenRefusesNumbersOutsideTheirRanges) {
  const std::pair<std::string, std::string> cases[] = {
      {"--profile uniform --pps 1e-300", "--pps 1e-300: must be in 0.001..1000000000 packets per second"},
      {"--profile uniform --pps nan", "--pps nan: must be in 0.001..1000000000 packets per second"},
      {"--duration 1e300", "--duration 1e+300 s: must be in 0.001..100000000 seconds"},
      {"--duration nan", "--duration nan s: must be in 0.001..100000000 seconds"},
      {"--duration -1", "--duration -1 s: must be in 0.001..100000000 seconds"},
      {"--profile zipf --zipf-exponent nan", "--zipf-exponent nan: must be in 0.01..10"},
      {"--profile uniform --flows 1000000 --duration 0.001",
       "10000000 packets at 10000000000 per second: the rate must be at most 1000000000 per second"},
  };
  for (const auto& [options, expected] : cases) {
    const auto r = run_cli("trace gen " + options + " -o " + path("out.pcap"));
    EXPECT_EQ(r.exit_code, 2) << options << ": " << r.output;
    EXPECT_NE(r.output.find("flowtrack: error: trace gen: " + expected), std::string::npos) << options << ": " << r.output;
  }
}

TEST_F(InputsCli, EveryCommandTakesTheSameWorkerBound) {
  const std::pair<std::string, std::string> cases[] = {
      {"bench nf --quick --nfs fwd --workers 1000", "bench nf: --workers must be in 1..64"},
      {"bench scale --quick --workers 65", "bench scale: --workers must be in 1..64"},
      {"run --nf fwd --in " + path("campus.pcap") + " --workers 1000", "run: --workers must be in 1..64"},
  };
  for (const auto& [command, expected] : cases) {
    const auto r = run_cli(command);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
    EXPECT_NE(r.output.find("flowtrack: error: " + expected), std::string::npos) << command << ": " << r.output;
  }
}

// 64 workers of 2^28 connections each: terabytes, refused before anything is allocated.
TEST_F(InputsCli, MoreMemoryThanTheMachineHasIsRefusedBeforeTheBuild) {
  const std::string config = write("huge.toml",
                                   "[lb]\nmax_connections = 268435456\n[[service]]\nvip = \"198.18.0.1\"\nport = 443\n"
                                   "  [[service.backend]]\n  name = \"a\"\n  address = \"10.200.0.1\"\n");
  const auto r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap") + " --workers 64");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("huge.toml: 64 instances of 1 service with Maglev tables of 65537 entries and 268435456 connections would "
                          "take about 3600.0 GiB"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("; this machine has "), std::string::npos) << r.output;
}

TEST_F(InputsCli, ABuildThatTakesSecondsIsAnnounced) {
  const std::string config = write("big-maglev.toml",
                                   "[slb]\nmaglev_size = 16777213\n[[service]]\nvip = \"198.18.0.1\"\nport = 443\n"
                                   "  [[service.backend]]\n  name = \"a\"\n  address = \"10.200.0.1\"\n");
  const auto r = run_cli("run --nf slb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("flowtrack: building slb: 1 instance of 1 service with Maglev tables of 16777213 entries, about 64 MiB; "
                          "this takes a few seconds"),
            std::string::npos)
      << r.output;
}

// A live run (net_null port: no root, no NIC) whose start builds a Maglev table of 16M entries: SIGTERM
// once the build is announced (the ports are up, the worker builds its instance) ends the start there:
// the worker never serves, and the report says so, with the exit status of a stopped run.
TEST_F(InputsCli, SigtermDuringALiveStartEndsItBeforeTheWorkersServe) {
  const std::string config = write("slow-live.toml",
                                   "[slb]\nmaglev_size = 16777213\n[[service]]\nvip = \"10.9.0.10\"\nport = 80\n"
                                   "  [[service.backend]]\n  name = \"b\"\n  address = \"10.9.0.20\"\n"
                                   "[dataplane]\n[[dataplane.port]]\ndevice = \"net_null0\"\naddress = \"10.9.0.1/24\"\n");
  const std::string log = path("slow-live.log");
  const auto r = run_cli("run --nf slb --config " + config +
                         " --dpdk '--no-huge --no-pci --no-shconf --no-telemetry -l 0 -m 256 --log-level=error --vdev=net_null0' > " + log +
                         " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q 'flowtrack: building' " + log +
                         " && break; sleep 0.05; done; kill -TERM $pid; wait $pid; status=$?; cat " + log + "; exit $status");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("flowtrack: building slb: 1 instance of 1 service with Maglev tables of 16777213 entries"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("flowtrack live: nf slb stopped during its start, before its workers served, 1 worker(s)"), std::string::npos)
      << r.output;
  // Nothing reached the function (the port's ARP request for its next hop may have gone out).
  EXPECT_NE(r.output.find("packets in 0, to the function 0, out "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace flowtrack
