// How `flowtrack run` and `flowtrack bench nf` give the workers a stateful function (--scaling sharded:
// one instance per worker; spinlock: one shared instance under a lock) and how its tracker ages
// connections (--aging wheel | heap): the choice changes the speed, never what comes out. A stateful
// LB with a fixed pool and the Maglev policy must emit the very same packets in every combination; the
// NAT must track every connection and drop the same packets in every combination.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/packet/parser.hpp"
#include "campus_configs.hpp"
#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

constexpr unsigned kConnections = 1500;
constexpr unsigned kWindows = 2;

class RunScalingCli : public testing::ScratchSuite<RunScalingCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("scaling");
    const auto gen = run_cli("trace gen --profile campus --flows " + std::to_string(kConnections) + " --windows " +
                             std::to_string(kWindows) + " -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    // A per-flow policy: the backend depends on the flow only.
    std::ofstream(path("lb.toml")) << testing::campus_lb_config("maglev", 10000, 3);
    std::ofstream(path("nat.toml")) << testing::campus_nat_config(10000);
  }
  // The packets of a capture as (time, bytes), sorted: equal captures give equal lists whatever the
  // order of packets with the same timestamp.
  static std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> packets_of(const std::string& file) {
    const PacketStore store = PacketStore::load_pcap(file);
    std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> out;
    for (std::size_t i = 0; i < store.size(); ++i) {
      out.emplace_back(store[i].timestamp_ns, std::vector<std::uint8_t>(store[i].bytes.begin(), store[i].bytes.end()));
    }
    std::ranges::sort(out);
    return out;
  }
};

TEST_F(RunScalingCli, StatefulLbEmitsTheSamePacketsWhateverTheScalingAndAging) {
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> reference;
  for (const std::string scaling : {"sharded", "spinlock"}) {
    for (const std::string aging : {"wheel", "heap"}) {
      const std::string out = path("lb-" + scaling + "-" + aging + ".pcap");
      const auto r = run_cli("run --nf lb --config " + path("lb.toml") + " --in " + path("campus.pcap") + " --out " + out +
                             " --workers 2 --scaling " + scaling + " --aging " + aging + " --json");
      ASSERT_EQ(r.exit_code, 0) << r.output;
      const auto j = testing::first_json_object(r.output);
      EXPECT_EQ(j["scaling"], scaling);
      EXPECT_EQ(j["aging"], aging);
      EXPECT_EQ(j["packets_in"], j["packets_out"]) << scaling << "/" << aging << ": " << r.output;
      EXPECT_EQ(j["worker_mpps"].size(), 2u);
      const auto packets = packets_of(out);
      if (reference.empty()) {
        reference = packets;
        ASSERT_FALSE(reference.empty());
      } else {
        EXPECT_TRUE(packets == reference) << scaling << "/" << aging << " differs from sharded/wheel";
      }
    }
  }
}

// The campus trace is captured on the clients' side: answers come from the VIPs. `run` replays each
// answer as its backend sent it (lb_answers.hpp), and the balancer's reverse path must give back the
// captured packet byte for byte; requests leave towards a backend, never a VIP.
TEST_F(RunScalingCli, LbReversePathRestoresEveryCapturedAnswerExactly) {
  const std::string out = path("lb-reverse.pcap");
  const auto r = run_cli("run --nf lb --config " + path("lb.toml") + " --in " + path("campus.pcap") + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const PacketStore in = PacketStore::load_pcap(path("campus.pcap"));
  const PacketStore balanced = PacketStore::load_pcap(out);
  ASSERT_EQ(in.size(), balanced.size());
  std::size_t answers = 0, requests = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {  // one worker: the output keeps the input's order
    ParsedPacket before, after;
    ASSERT_EQ(parse_frame(in[i].bytes, in.link_type(), before), ParseStatus::ok);
    ASSERT_EQ(parse_frame(balanced[i].bytes, balanced.link_type(), after), ParseStatus::ok);
    if (before.ip_version != 4 || before.protocol() != ipproto::kTcp) continue;  // the config balances TCP only
    const std::uint32_t first_octet = to_host32(before.key4.src_addr) >> 24;
    if (first_octet == 198) {  // from a VIP (198.18.0.x)
      ++answers;
      EXPECT_TRUE(std::ranges::equal(in[i].bytes, balanced[i].bytes)) << "answer " << i;
    } else {
      ++requests;
      EXPECT_EQ(to_host32(after.key4.dst_addr) >> 8, 0x0ac800u) << "request " << i << " not sent to a backend (10.200.0.x)";
    }
  }
  EXPECT_GT(answers, in.size() / 4);
  EXPECT_GT(requests, in.size() / 4);
}

// The shifted windows cut connections at the rotation point: the tail of such a connection (replies)
// comes before its head, and those inbound packets belong to no session: the replay cannot present
// them to the NAT (replay_rehearsal.hpp) and counts them. With sharded scaling they are the only drops,
// the same with either aging. With spinlock scaling the rehearsal shows the one instance the trace in
// capture order, the two workers' interleaving differs, and an answer whose port the NAT chose
// differently in the run meets no mapping (no_mapping): every packet is still accounted for.
TEST_F(RunScalingCli, NatTranslatesEveryPacketWhateverTheScalingAndAging) {
  nlohmann::json reference_drops;
  for (const std::string scaling : {"sharded", "spinlock"}) {
    for (const std::string aging : {"wheel", "heap"}) {
      const auto r = run_cli("run --nf nat --config " + path("nat.toml") + " --in " + path("campus.pcap") +
                             " --workers 2 --scaling " + scaling + " --aging " + aging + " --json");
      ASSERT_EQ(r.exit_code, 0) << r.output;
      const auto j = testing::first_json_object(r.output);
      const auto unpresentable = j["drops"].value("replay_unpresentable", std::uint64_t{0});
      const auto no_mapping = j["drops"].value("no_mapping", std::uint64_t{0});
      EXPECT_LT(unpresentable, kConnections / 100) << r.output;
      EXPECT_EQ(j["packets_in"].get<std::uint64_t>(), j["packets_out"].get<std::uint64_t>() + unpresentable + no_mapping) << r.output;
      if (scaling == "sharded") {
        EXPECT_EQ(j["connections"].get<std::uint64_t>(), kConnections * kWindows) << aging;
        EXPECT_EQ(j["drops"].size(), unpresentable == 0 ? 0u : 1u) << r.output;
        if (reference_drops.is_null()) reference_drops = j["drops"];
        EXPECT_EQ(j["drops"], reference_drops) << aging;
      } else {
        EXPECT_GE(j["connections"].get<std::uint64_t>(), kConnections * kWindows) << aging;
        EXPECT_LT(no_mapping, kConnections * kWindows) << r.output;
      }
    }
  }
}

TEST_F(RunScalingCli, ChoicesThatDoNotApplyAreOneClearError) {
  const std::string in = " --in " + path("campus.pcap");
  auto r = run_cli("run --nf lb --config " + path("lb.toml") + in + " --scaling rwlock");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--scaling"), std::string::npos) << r.output;
  r = run_cli("run --nf lb --config " + path("lb.toml") + in + " --aging scan");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--aging"), std::string::npos) << r.output;
  r = run_cli("run --nf slb --config " + path("lb.toml") + in + " --scaling spinlock");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("keeps no state"), std::string::npos) << r.output;
  r = run_cli("run --nf lb --config " + path("lb.toml") + in + " --table libcuckoo");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("many-writer"), std::string::npos) << r.output;
  r = run_cli("bench nf --tables cuckoo,nosuch --reps 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("unknown table 'nosuch'"), std::string::npos) << r.output;
}

TEST_F(RunScalingCli, BenchNfMeasuresEveryCombinationAndComparesSharingWithSharding) {
  // The whole grid without the stage-clocking runs; then one configuration with them, for their fields.
  auto r = run_cli("bench nf --nfs fwd,lb,nat --tables cuckoo,chained --agings wheel,heap --scalings sharded,spinlock "
                   "--workers 1,2 --burst 32,1 --flows 300 --windows 1 --reps 1 --no-stages --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t rows = 0;
  std::map<std::string, std::vector<std::uint64_t>> shared_state;  // nf/table/aging -> working sets, one per worker count
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    const std::string line = j.dump();
    for (const char* field : {"nf", "table", "aging", "scaling", "workers", "burst", "mpps", "cycles_per_packet", "mpps_best",
                              "cycles_per_packet_best", "vs_fwd", "vs_per_packet", "live_connections", "drops"}) {
      ASSERT_TRUE(j.contains(field)) << field << " missing in " << line;
    }
    EXPECT_FALSE(j.contains("cycles_state")) << line;
    EXPECT_GT(j["mpps"].get<double>(), 0) << line;
    // Bursts of one are measured first, so every other burst size has its ratio to them.
    EXPECT_GT(j["vs_per_packet"].get<double>(), 0) << line;
    if (j["nf"] != "fwd") {
      EXPECT_GT(j["live_connections"].get<std::uint64_t>(), 0u) << line;
      // The memory limit over the function's state, and its cycles a packet in batched line fetches.
      ASSERT_TRUE(j.contains("line_fetches") && j.contains("memory_working_set_bytes")) << line;
      EXPECT_GE(j["memory_working_set_bytes"].get<std::uint64_t>(), 4096u) << line;
      EXPECT_GT(j["memory_dependent_cycles_per_line"].get<double>(), 0) << line;
      EXPECT_DOUBLE_EQ(j["line_fetches"].get<double>() * j["memory_batched_cycles_per_line"].get<double>(),
                       j["cycles_per_packet"].get<double>())
          << line;
      if (j["scaling"] == "spinlock" && j["burst"] == 32) {
        const std::string config = j["nf"].get<std::string>() + "/" + j["table"].get<std::string>() + "/" + j["aging"].get<std::string>();
        shared_state[config].push_back(j["memory_working_set_bytes"].get<std::uint64_t>());
      }
    } else {
      EXPECT_FALSE(j.contains("line_fetches")) << "the forwarder keeps no state: " << line;
    }
    ++rows;
  }
  // Per worker count and burst size: fwd, then lb and nat x 2 tables x 2 agings x 2 scalings.
  EXPECT_EQ(rows, 2u * 2u * (1 + 2 * 2 * 2 * 2));
  // One instance under a lock is one working set, whatever the workers that share it.
  ASSERT_EQ(shared_state.size(), 2u * 2u * 2u);
  for (const auto& [config, bytes] : shared_state) {
    ASSERT_EQ(bytes.size(), 2u) << config;
    EXPECT_EQ(bytes[0], bytes[1]) << config;
  }
  r = run_cli("bench nf --nfs lb --tables cuckoo --scalings sharded --workers 1 --burst 32 --flows 300 --windows 1 --reps 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto clocked = testing::first_json_object(r.output);
  // The best of three repetitions is at least their median.
  EXPECT_GE(clocked["mpps_best"].get<double>(), clocked["mpps"].get<double>()) << r.output;
  EXPECT_LE(clocked["cycles_per_packet_best"].get<double>(), clocked["cycles_per_packet"].get<double>()) << r.output;
  for (const char* stage : {"cycles_parse", "cycles_lookup", "cycles_state", "cycles_rewrite", "cycles_aging"}) {
    ASSERT_TRUE(clocked.contains(stage)) << stage << " missing in " << r.output;
  }
  EXPECT_GT(clocked["cycles_state"].get<double>(), 0) << r.output;
  r = run_cli("bench nf --nfs fwd,lb --tables cuckoo --scalings sharded,spinlock --workers 2 --burst 32 --flows 300 --windows 1 --reps 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stateful LB ranked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("one shared instance under a spinlock / one instance per worker"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace flowtrack
