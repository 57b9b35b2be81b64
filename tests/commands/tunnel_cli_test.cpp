// `flowtrack run` of the load balancers in tunnel mode on a campus trace: the answers of the services
// (from the VIPs) are left out and reported, the output holds only tunnelled client packets, each
// connection's packets to one backend with the client's packet intact inside, GUE's source port
// constant for a connection and spread across them, and the datagrams too big for a narrow path once
// encapsulated counted as too_big. `bench nf` sets each tunnel mode against NAT mode, whole and with its
// rewrite stage left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "campus_configs.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/tunnel.hpp"
#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace tunnel_cli_test {

using testing::run_cli;

// 198.18.0.1-4, the campus servers: the VIPs.
bool from_vip(const FlowKeyV4& key) { return (to_host32(key.src_addr) & 0xfffffff0u) == 0xc6120000u; }
bool to_vip(const FlowKeyV4& key) { return (to_host32(key.dst_addr) & 0xfffffff0u) == 0xc6120000u; }

class TunnelCli : public testing::ScratchSuite<TunnelCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("tunnel");
    const auto gen = run_cli("trace gen --profile campus --flows 1500 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }

  // TCP and UDP packets of the campus trace from a VIP: the answers of the services.
  static std::uint64_t answers_in_trace() {
    const PacketStore trace = PacketStore::load_pcap(path("campus.pcap"));
    std::uint64_t answers = 0;
    for (std::size_t i = 0; i < trace.size(); ++i) {
      ParsedPacket p;
      if (parse_frame(trace[i].bytes, trace.link_type(), p) != ParseStatus::ok || p.ip_version != 4) continue;
      answers += from_vip(p.key4) && p.key4.protocol != ipproto::kIcmp;
    }
    return answers;
  }
};

// What the balancer sent in the tunnel, packet by packet: the outer header, the client's packet inside.
// The services' packets only go in it: the trace's others (ICMP) pass as they came.
struct Tunnelled {
  FlowKeyV4 outer;
  FlowKeyV4 inner;
};

std::vector<Tunnelled> tunnelled_packets(const std::string& file, ForwardMode mode) {
  const PacketStore out = PacketStore::load_pcap(file);
  std::vector<Tunnelled> packets;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ParsedPacket outer, inner;
    EXPECT_EQ(parse_frame(out[i].bytes, out.link_type(), outer), ParseStatus::ok);
    if (outer.key4.src_addr != to_network32(0x0ac8ff01)) {  // not from the tunnel's source
      EXPECT_EQ(outer.key4.protocol, ipproto::kIcmp);
      continue;
    }
    const std::size_t overhead = tunnel_overhead(mode);
    EXPECT_EQ(outer.key4.protocol, mode == ForwardMode::ipip ? 4 : ipproto::kUdp);
    // The capture keeps 128 bytes of each frame: the inner headers are whole, the payload cut.
    EXPECT_EQ(parse_frame(out[i].bytes.subspan(outer.l3_offset + overhead), LinkType::raw_ip, inner), ParseStatus::ok);
    EXPECT_EQ(outer.ip_total_length, inner.ip_total_length + overhead);
    packets.push_back({outer.key4, inner.key4});
  }
  return packets;
}

TEST_F(TunnelCli, TheStatefulLbSendsEveryClientPacketThroughTheTunnelAndNoAnswer) {
  const std::uint64_t answers = answers_in_trace();
  ASSERT_GT(answers, 1000u);
  for (const ForwardMode mode : {ForwardMode::ipip, ForwardMode::gue}) {
    const std::string name(forward_mode_name(mode));
    std::ofstream(path(name + ".toml")) << testing::campus_tunnel_lb_config(name);
    const auto r = run_cli("run --nf lb --config " + path(name + ".toml") + " --in " + path("campus.pcap") + " --out " +
                           path(name + ".pcap") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = testing::first_json_object(r.output);
    EXPECT_EQ(j["packets_direct_return"].get<std::uint64_t>(), answers);
    EXPECT_EQ(j["packets_in"], j["packets_out"]) << r.output;  // every client packet fits a 1500-byte path

    std::map<FlowKeyV4, FlowKeyV4, decltype([](const FlowKeyV4& a, const FlowKeyV4& b) {
               return std::memcmp(&a, &b, sizeof(a)) < 0;
             })>
        outer_of;  // a connection's first packet's outer header
    std::set<std::uint16_t> source_ports;
    for (const Tunnelled& t : tunnelled_packets(path(name + ".pcap"), mode)) {
      EXPECT_TRUE(to_vip(t.inner));  // to a VIP, as the client sent it
      const auto [first, fresh] = outer_of.try_emplace(t.inner, t.outer);
      EXPECT_EQ(t.outer.dst_addr, first->second.dst_addr);  // one backend for the connection
      if (mode == ForwardMode::gue) {
        EXPECT_EQ(t.outer.src_port, first->second.src_port);  // one source port for the connection
        EXPECT_EQ(t.outer.dst_port, to_network16(kDefaultGuePort));
        if (fresh) source_ports.insert(t.outer.src_port);
      }
    }
    EXPECT_GT(outer_of.size(), 1000u);
    if (mode == ForwardMode::gue) {
      EXPECT_GE(source_ports.size() * 100, outer_of.size() * 95);
    }
  }
}

TEST_F(TunnelCli, DatagramsTooBigForANarrowPathAreCounted) {
  std::ofstream(path("ipip-1000.toml")) << testing::campus_tunnel_lb_config("ipip", 1000);
  const auto r = run_cli("run --nf lb --config " + path("ipip-1000.toml") + " --in " + path("campus.pcap") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::first_json_object(r.output);
  ASSERT_TRUE(j["drops"].contains("too_big")) << r.output;
  EXPECT_GT(j["drops"]["too_big"].get<std::uint64_t>(), 0u);
  // The campus clients do not set DF: nothing is answered, the packets are dropped.
  EXPECT_EQ(j["packets_replied"].get<std::uint64_t>(), 0u);
}

TEST_F(TunnelCli, BenchNfSetsEachTunnelModeAgainstNatModeWithAndWithoutItsEncapsulation) {
  const auto r = run_cli("bench nf --nfs lb --tables cuckoo --scalings sharded --workers 1 --burst 32 --flows 300 --windows 1 "
                         "--reps 2 --forwards nat,ipip,gue --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, nlohmann::json> by_forward;
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    if (j.contains("forward")) by_forward[j["forward"].get<std::string>()] = j;
  }
  // NAT mode, the two tunnels, and NAT mode on the packets a tunnel handles (nat-clients).
  ASSERT_EQ(by_forward.size(), 4u) << r.output;
  EXPECT_FALSE(by_forward["nat"].contains("cycles_vs_nat_mode_besides_rewrite"));
  EXPECT_FALSE(by_forward["nat-clients"].contains("cycles_vs_nat_mode_besides_rewrite"));
  // The tunnels and nat-clients are given the clients' packets alone: the same packets, fewer than NAT mode's.
  const auto handled = [&](const char* forward) { return by_forward[forward]["packets_handled"].get<std::uint64_t>(); };
  EXPECT_EQ(handled("nat"), by_forward["nat"]["packets"].get<std::uint64_t>());
  EXPECT_LT(handled("nat-clients"), handled("nat"));
  EXPECT_EQ(handled("ipip"), handled("nat-clients"));
  EXPECT_EQ(handled("gue"), handled("nat-clients"));
  const auto stages = [](const nlohmann::json& j, bool with_rewrite) {
    double sum = 0;
    for (const char* stage : {"cycles_parse", "cycles_lookup", "cycles_state", "cycles_rewrite", "cycles_aging"}) {
      if (with_rewrite || std::string(stage) != "cycles_rewrite") sum += j[stage].get<double>();
    }
    return sum;
  };
  for (const char* tunnel : {"ipip", "gue"}) {
    const nlohmann::json& j = by_forward[tunnel];
    ASSERT_TRUE(j.contains("cycles_vs_nat_mode_besides_rewrite")) << j.dump();
    // Its stages but the rewrite over NAT mode's stages, all from the clocked runs.
    EXPECT_DOUBLE_EQ(j["cycles_vs_nat_mode_besides_rewrite"].get<double>(), stages(j, false) / stages(by_forward["nat"], true));
    EXPECT_GT(j["cycles_rewrite"].get<double>(), 0) << j.dump();
    // The paired ratio is the median (by nearest rank: the higher of two) of the repetitions' own ratios.
    const auto reps = j["cycles_per_packet_reps"].get<std::vector<double>>();
    const auto nat_reps = by_forward["nat"]["cycles_per_packet_reps"].get<std::vector<double>>();
    ASSERT_EQ(reps.size(), 2u);
    ASSERT_EQ(nat_reps.size(), 2u);
    EXPECT_DOUBLE_EQ(j["cycles_vs_nat_mode"].get<double>(), std::max(reps[0] / nat_reps[0], reps[1] / nat_reps[1])) << j.dump();
    const auto same_reps = by_forward["nat-clients"]["cycles_per_packet_reps"].get<std::vector<double>>();
    ASSERT_EQ(same_reps.size(), 2u);
    EXPECT_DOUBLE_EQ(j["cycles_vs_nat_mode_same_packets"].get<double>(), std::max(reps[0] / same_reps[0], reps[1] / same_reps[1]))
        << j.dump();
  }
}

}  // namespace tunnel_cli_test
}  // namespace flowtrack
