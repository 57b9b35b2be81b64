// `run --dispatch rss|laps` as a user runs it: the dispatcher changes where packets come from, not what
// a function does with them. Dispatched by RSS, every function writes the capture of the partitioned run
// byte for byte (each worker gets the same packets in the same order); dispatched by LAPS, the stateless
// functions forward the same packets; LAPS refuses a sharded stateful function (its connections' state
// could not follow a migration); and the report counts migrations and reordering under a slowed worker.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "campus_configs.hpp"
#include "support/cli_runner.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

class DispatchCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("flowtrack_dispatch_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const auto gen = run_cli("trace gen --profile campus --flows 150 --windows 2 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    std::ofstream(path("lb.toml")) << testing::campus_lb_config("least_connections", 4000);
    std::ofstream(path("nat.toml")) << testing::campus_nat_config(4000);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static std::string config(const std::string& nf) {
    if (nf == "fwd") return "";
    return " --config " + (nf == "slb" ? std::string(FLOWTRACK_SOURCE_DIR "/examples/slb.toml") : path(nf + ".toml"));
  }
  // The capture `run --nf nf` on two workers writes with `args`.
  static std::string capture(const std::string& nf, const std::string& args) {
    const std::string out = path("out.pcap");
    const auto r = run_cli("run --nf " + nf + config(nf) + " --in " + path("campus.pcap") + " --out " + out + " --workers 2 " + args);
    EXPECT_EQ(r.exit_code, 0) << nf << " " << args << ": " << r.output;
    std::ifstream in(out, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static std::vector<std::string> sorted_frames(const std::string& nf, const std::string& args) {
    capture(nf, args);
    const PacketStore store = PacketStore::load_pcap(path("out.pcap"));
    std::vector<std::string> frames;
    for (std::size_t i = 0; i < store.size(); ++i) frames.emplace_back(reinterpret_cast<const char*>(store[i].bytes.data()), store[i].bytes.size());
    std::ranges::sort(frames);
    return frames;
  }
  static inline std::filesystem::path dir_;
};

// Rings larger than the trace: no packet can be dropped at a ring, however the threads are scheduled.
constexpr const char* kRoomyRings = " --ring 65536";

TEST_F(DispatchCli, RssDispatchWritesThePartitionedCaptureForEveryFunction) {
  for (const std::string nf : {"fwd", "slb", "lb", "nat"}) {
    const std::string partitioned = capture(nf, "");
    ASSERT_GT(partitioned.size(), 1000u) << nf;
    EXPECT_TRUE(partitioned == capture(nf, std::string("--dispatch rss --slow-worker-ns 500") + kRoomyRings)) << nf;
  }
}

TEST_F(DispatchCli, LapsDispatchForwardsWhatThePartitionedRunForwards) {
  for (const std::string nf : {"fwd", "slb"}) {
    EXPECT_EQ(sorted_frames(nf, ""), sorted_frames(nf, std::string("--dispatch laps") + kRoomyRings)) << nf;
  }
}

TEST_F(DispatchCli, LapsRefusesAShardedStatefulFunction) {
  const auto r = run_cli("run --nf lb --config " + path("lb.toml") + " --in " + path("campus.pcap") + " --dispatch laps");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--scaling spinlock"), std::string::npos) << r.output;
}

TEST_F(DispatchCli, ReportsMigrationsAndReorderingUnderASlowedWorker) {
  const PacketStore trace = PacketStore::load_pcap(path("campus.pcap"));
  for (const std::string dispatch : {"rss", "laps"}) {
    const auto r = run_cli("run --nf fwd --in " + path("campus.pcap") + " --workers 2 --dispatch " + dispatch +
                           " --ring 64 --slow-worker-ns 20000 --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = testing::first_json_object(r.output);
    EXPECT_EQ(j["dispatch"], dispatch);
    EXPECT_EQ(j["packets_in"].get<std::uint64_t>(), trace.size()) << r.output;
    if (dispatch == "rss") {
      EXPECT_EQ(j["migrations"].get<std::uint64_t>(), 0u);
      EXPECT_EQ(j["out_of_order"].get<std::uint64_t>(), 0u) << "RSS never reorders a flow";
    } else {
      EXPECT_GT(j["migrations"].get<std::uint64_t>(), 0u) << r.output;
      EXPECT_LE(j["out_of_order"].get<std::uint64_t>(), trace.size());
    }
  }
}

}  // namespace
}  // namespace flowtrack
