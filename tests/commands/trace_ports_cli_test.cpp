// `flowtrack trace ports` (trace_commands.hpp): a client-side campus trace as the live ports of the LB
// and of the NAT receive it. Each side's frames in its port's file, addressed to that port's MAC; the
// answers as they reached the function (from a backend, to the pool); each connection on its owner's
// queue, or each frame on the queue the port's RSS gives it; nothing lost but what the rehearsal cannot
// present, which the command counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "support/addresses.hpp"
#include "support/cli_runner.hpp"
#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

constexpr const char* kPortMacs = "02:70:63:61:70:00,02:70:63:61:70:01";
const MacAddress kFirstPortMac{0x02, 0x70, 0x63, 0x61, 0x70, 0x00}, kSecondPortMac{0x02, 0x70, 0x63, 0x61, 0x70, 0x01};

std::string two_ports_facing(const std::string& first_role, const std::string& second_role) {
  return "[dataplane]\n[[dataplane.port]]\ndevice = \"net_pcap0\"\naddress = \"192.0.2.1/30\"\ngateway = \"192.0.2.2\"\nrole = \"" +
         first_role + "\"\n[[dataplane.port]]\ndevice = \"net_pcap1\"\naddress = \"10.200.0.254/24\"\nrole = \"" + second_role + "\"\n";
}

// Every frame of the file `file`, parsed, with its destination MAC.
struct PortFrame {
  ParsedPacket parsed;
  MacAddress to;
  std::vector<std::uint8_t> bytes;
};
std::vector<PortFrame> port_file_frames(const std::string& file) {
  const PacketStore store = PacketStore::load_pcap(file);
  std::vector<PortFrame> frames;
  for (std::size_t i = 0; i < store.size(); ++i) {
    PortFrame f;
    f.bytes.assign(store[i].bytes.begin(), store[i].bytes.end());
    EXPECT_EQ(parse_frame(f.bytes, LinkType::ethernet, f.parsed), ParseStatus::ok);
    std::copy_n(f.bytes.begin(), 6, f.to.begin());
    frames.push_back(std::move(f));
  }
  return frames;
}

// The number in "N packets of M; K answers left out" of the command's output.
std::size_t packets_written(const std::string& output) {
  const auto at = output.rfind("\n", output.find(" packets of "));
  return std::stoul(output.substr(at == std::string::npos ? 0 : at + 1));
}

class TracePortsCli : public testing::ScratchSuite<TracePortsCli> {
 protected:
  static void SetUpTestSuite() {
    make_scratch("trace_ports");
    const auto gen = run_cli("trace gen --profile campus --flows 2000 -o " + path("campus.pcap"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
};

TEST_F(TracePortsCli, TheLbsClientsAndBackendsEachOnTheirPortEachConnectionOnItsOwnersQueue) {
  std::ofstream(path("lb.toml")) << R"([lb]
policy = "maglev"
max_connections = 10000
[[service]]
name = "web"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = [443, 80]
protocol = "tcp"
  [[service.backend]]
  name = "web-1"
  address = "10.200.0.1"
  [[service.backend]]
  name = "web-2"
  address = "10.200.0.2"
)" << two_ports_facing("clients", "backends");
  const auto r = run_cli("trace ports --nf lb --config " + path("lb.toml") + " --workers 2 --queues 2 --split owner --macs " + kPortMacs +
                         " -o " + path("lb") + " " + path("campus.pcap"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::set<std::uint32_t> vips{test::ipv4("198.18.0.1"), test::ipv4("198.18.0.2"), test::ipv4("198.18.0.3"), test::ipv4("198.18.0.4")};
  const std::set<std::uint32_t> backends{test::ipv4("10.200.0.1"), test::ipv4("10.200.0.2")};
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::set<unsigned>> queues_of_client;  // by the client's endpoint
  std::size_t total = 0, from_backends = 0;
  for (unsigned q = 0; q < 2; ++q) {
    for (const PortFrame& f : port_file_frames(path("lb-clients-" + std::to_string(q) + ".pcap"))) {
      EXPECT_EQ(f.to, kFirstPortMac);
      EXPECT_TRUE(vips.contains(f.parsed.key4.dst_addr));
      queues_of_client[{f.parsed.key4.src_addr, f.parsed.key4.src_port}].insert(q);
      ++total;
    }
    for (const PortFrame& f : port_file_frames(path("lb-backends-" + std::to_string(q) + ".pcap"))) {
      EXPECT_EQ(f.to, kSecondPortMac);
      EXPECT_FALSE(vips.contains(f.parsed.key4.dst_addr));
      // The web service's answers come from its backends; the rest (UDP, ICMP: no service) as captured.
      if (f.parsed.key4.protocol == ipproto::kTcp) {
        EXPECT_TRUE(backends.contains(f.parsed.key4.src_addr));
        ++from_backends;
      }
      queues_of_client[{f.parsed.key4.dst_addr, f.parsed.key4.dst_port}].insert(q);
      ++total;
    }
  }
  EXPECT_GT(from_backends, 1000u);
  std::set<unsigned> used;
  for (const auto& [client, queues] : queues_of_client) {
    EXPECT_EQ(queues.size(), 1u);
    used.insert(queues.begin(), queues.end());
  }
  EXPECT_EQ(used.size(), 2u);
  EXPECT_EQ(total, packets_written(r.output)) << r.output;
}

TEST_F(TracePortsCli, TheNatsInsideAndOutsideEachOnTheirPortEachFrameOnItsRssQueue) {
  std::ofstream(path("nat.toml")) << "[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\", \"203.0.113.2\"]\nmax_sessions = 10000\nmax_mappings = 10000\n"
                                  << two_ports_facing("inside", "outside");
  const auto r = run_cli("trace ports --nf nat --config " + path("nat.toml") + " --workers 2 --queues 2 --macs " + kPortMacs + " -o " +
                         path("nat") + " " + path("campus.pcap"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RssSteering rss(2);
  std::size_t total = 0, inbound = 0;
  for (unsigned q = 0; q < 2; ++q) {
    for (const PortFrame& f : port_file_frames(path("nat-inside-" + std::to_string(q) + ".pcap"))) {
      EXPECT_EQ(f.to, kFirstPortMac);
      EXPECT_EQ(f.parsed.key4.src_addr & test::ipv4("255.255.0.0"), test::ipv4("10.0.0.0"));
      EXPECT_EQ(rss.queue_of(f.bytes, LinkType::ethernet), q);
      ++total;
    }
    for (const PortFrame& f : port_file_frames(path("nat-outside-" + std::to_string(q) + ".pcap"))) {
      EXPECT_EQ(f.to, kSecondPortMac);
      // Answers reach the NAT at the external endpoint it allocated.
      EXPECT_TRUE(f.parsed.key4.dst_addr == test::ipv4("203.0.113.1") || f.parsed.key4.dst_addr == test::ipv4("203.0.113.2"));
      EXPECT_EQ(rss.queue_of(f.bytes, LinkType::ethernet), q);
      ++inbound;
      ++total;
    }
  }
  EXPECT_GT(inbound, 1000u);
  EXPECT_EQ(total, packets_written(r.output)) << r.output;
}

TEST_F(TracePortsCli, AMismatchIsOneClearError) {
  std::ofstream(path("one.toml")) << "[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\"]\n" << two_ports_facing("inside", "outside");
  const auto macs = run_cli("trace ports --nf nat --config " + path("one.toml") + " --macs 02:70:63:61:70:00 -o " + path("x") + " " +
                            path("campus.pcap"));
  EXPECT_EQ(macs.exit_code, 2);
  EXPECT_NE(macs.output.find("--macs gives 1 MAC(s) for the configuration's 2 port(s)"), std::string::npos) << macs.output;
  const auto split = run_cli("trace ports --nf nat --config " + path("one.toml") + " --workers 2 --queues 3 --split owner --macs " + kPortMacs +
                             " -o " + path("x") + " " + path("campus.pcap"));
  EXPECT_EQ(split.exit_code, 2);
  EXPECT_NE(split.output.find("--queues must be --workers"), std::string::npos) << split.output;
}

}  // namespace
}  // namespace flowtrack
