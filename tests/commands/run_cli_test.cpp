// `flowtrack run` and `bench scale` / `bench aging` as a user runs them: the example configurations
// work as they are on the default campus trace, the output pcap holds what was forwarded, the JSON
// report has its fields, and a bad configuration is one error naming the file, the line and the key.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flowtrack/io/packet_store.hpp"
#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

class RunCli : public testing::ScratchSuite<RunCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("run");
    const auto gen = run_cli("trace gen --profile campus --flows 2000 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
  static std::string example(const std::string& name) {
    return std::string(FLOWTRACK_SOURCE_DIR) + "/examples/" + name;
  }
};

TEST_F(RunCli, EveryExampleRunsOnTheCampusTrace) {
  for (const std::string nf : {"fwd", "slb", "lb", "nat"}) {
    const auto r = run_cli("run --nf " + nf + " --config " + example(nf + ".toml") + " --in " + path("campus.pcap") +
                           " --out " + path(nf + ".pcap") + " --workers 2 --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = testing::first_json_object(r.output);
    for (const char* field : {"mpps", "packets_in", "packets_out", "drops", "connections"}) {
      EXPECT_TRUE(j.contains(field)) << nf << ": " << field << " missing in " << r.output;
    }
    EXPECT_EQ(j["packets_in"], j["packets_out"]) << nf << ": nothing should be dropped";
    const PacketStore in = PacketStore::load_pcap(path("campus.pcap"));
    const PacketStore out = PacketStore::load_pcap(path(nf + ".pcap"));
    EXPECT_EQ(out.size(), in.size()) << nf;
    if (nf == "nat") {
      EXPECT_EQ(j["connections"].get<std::uint64_t>(), 2000u);  // every connection, ICMP included, has its session
    }
    if (nf == "lb") {
      ASSERT_TRUE(j.contains("backends"));
      std::uint64_t total = 0;
      for (const auto& [name, n] : j["backends"].items()) total += n.get<std::uint64_t>();
      EXPECT_EQ(total, j["connections"].get<std::uint64_t>());
      EXPECT_GT(j["connections"].get<std::uint64_t>(), 1500u);
    }
  }
}

TEST_F(RunCli, BadConfigurationNamesFileLineAndKey) {
  const std::string config = path("bad.toml");
  std::ofstream(config) << "[lb]\npolicy = \"maglev\"\n\n[[service]]\nvip = \"198.18.0.1\"\nport = 70000\n"
                           "  [[service.backend]]\n  name = \"a\"\n  address = \"10.0.0.1\"\n";
  auto r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.toml:6: service.port"), std::string::npos) << r.output;

  std::ofstream(config) << "[lb]\npolcy = \"maglev\"\n";
  r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("bad.toml:2: lb.polcy: unknown key"), std::string::npos) << r.output;

  std::ofstream(config) << "[[service]]\nvip = \"300.1.1.1\"\nport = 80\n";
  r = run_cli("run --nf slb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("bad.toml:2: service.vip"), std::string::npos) << r.output;

  std::ofstream(config) << "[lb\n";
  r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not valid TOML"), std::string::npos) << r.output;
}

TEST_F(RunCli, MissingOrBrokenInputIsOneClearError) {
  auto r = run_cli("run --nf fwd --in " + path("absent.pcap"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  std::ofstream(path("broken.pcap")) << "not a capture";
  r = run_cli("run --nf fwd --in " + path("broken.pcap"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("run --nf lb --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("needs --config"), std::string::npos) << r.output;
}

TEST(BenchCli, ScaleAndAgingQuickPrintTheirComparisons) {
  // --quick's tables and workers on a smaller trace than its own (a fifth of the time under ASan).
  auto r = run_cli("bench scale --quick --strategies sharded,lockfree --flows 1000 --windows 2 --reps 1 --passes 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2w/1w"), std::string::npos) << r.output;
  r = run_cli("bench scale --strategies sharded,spinlock --tables chained --workers 1 --flows 500 --windows 2 --reps 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int rows = 0;
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    for (const char* f : {"strategy", "table", "workers", "mpps", "cycles_per_packet"}) EXPECT_TRUE(j.contains(f)) << j.dump();
    ++rows;
  }
  EXPECT_GE(rows, 2);
  r = run_cli("bench aging --capacity 4096 --packets 100000 --frequencies 100 --reps 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> methods;
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    for (const char* f : {"method", "frequency_hz", "cycles_per_packet", "expiry_cycles_per_packet", "occupancy"}) {
      EXPECT_TRUE(j.contains(f)) << j.dump();
    }
    EXPECT_EQ(j["left_after_drain"], 0) << j.dump();
    methods.insert(j["method"]);
  }
  EXPECT_EQ(methods, (std::set<std::string>{"wheel", "lazy", "scan", "heap"}));
  r = run_cli("bench scale --strategies striped --tables cuckoo");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// The LB's [[change]] schedule applies while the trace plays: a backend removed at the first packet
// never gets a connection, one added later does; a change naming an unknown backend stops the run
// before it starts, naming the file, the line and the key.
TEST_F(RunCli, LbAppliesItsScheduledPoolChangesWhileRunning) {
  const std::string config = path("changes.toml");
  const std::string base =
      "[[service]]\nname = \"web\"\nvip = [\"198.18.0.1\", \"198.18.0.2\", \"198.18.0.3\", \"198.18.0.4\"]\n"
      "port = [443, 80]\nprotocol = \"tcp\"\n"
      "  [[service.backend]]\n  name = \"web-1\"\n  address = \"10.200.0.1\"\n"
      "  [[service.backend]]\n  name = \"web-2\"\n  address = \"10.200.0.2\"\n";  // 11 lines
  std::ofstream(config) << base
                        << "[[change]]\nat = 0\nservice = \"web\"\nbackend = \"web-1\"\naction = \"remove\"\n"
                           "[[change]]\nat = 0.04\nservice = \"web\"\nbackend = \"web-3\"\naction = \"add\"\n"
                           "address = \"10.200.0.3\"\nweight = 4\n";
  auto r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap") + " --workers 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::first_json_object(r.output);
  ASSERT_TRUE(j.contains("backends")) << r.output;
  EXPECT_EQ(j["backends"].value("web-1", std::uint64_t{0}), 0u) << r.output;
  EXPECT_GT(j["backends"].value("web-2", std::uint64_t{0}), 0u) << r.output;
  EXPECT_GT(j["backends"].value("web-3", std::uint64_t{0}), 0u) << r.output;
  EXPECT_EQ(j["packets_in"], j["packets_out"]);

  std::ofstream(config) << base << "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"web-9\"\naction = \"drain\"\n";
  r = run_cli("run --nf lb --config " + config + " --in " + path("campus.pcap"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("changes.toml:15: change.backend: service 'web' has no backend 'web-9'"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace flowtrack
