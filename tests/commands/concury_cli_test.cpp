// `flowtrack run --nf concury` checked from the outside: its output capture, read back and grouped by
// connection, sends every connection to one backend of its own service across scheduled pool changes
// of each kind (add, drain, weight, remove), and sends no connection opened after a drain or a removal
// to that backend. The check knows nothing of Concury's structures: only the configuration and the
// packets that left.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/packet/parser.hpp"
#include "support/cli_runner.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

// The campus servers as VIPs: web (TCP 443, 80) on web-1..3 (10.200.0.1-3:8080), dns (UDP 53, 443) on
// udp-1..2 (10.200.1.1-2, the client's port). web-4 joins at 0.2 s, web-3 is drained at 0.4 s, web-1's
// weight goes to 4 at 0.6 s, web-2 is removed at 0.8 s; udp-1 is removed at 0.5 s.
constexpr const char* kConfig = R"([[service]]
name = "web"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = [443, 80]
protocol = "tcp"
  [[service.backend]]
  name = "web-1"
  address = "10.200.0.1"
  port = 8080
  [[service.backend]]
  name = "web-2"
  address = "10.200.0.2"
  port = 8080
  weight = 2
  [[service.backend]]
  name = "web-3"
  address = "10.200.0.3"
  port = 8080
[[service]]
name = "dns"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = [53, 443]
protocol = "udp"
  [[service.backend]]
  name = "udp-1"
  address = "10.200.1.1"
  [[service.backend]]
  name = "udp-2"
  address = "10.200.1.2"
[[change]]
at = 0.2
service = "web"
backend = "web-4"
action = "add"
address = "10.200.0.4"
port = 8080
weight = 2
[[change]]
at = 0.4
service = "web"
backend = "web-3"
action = "drain"
[[change]]
at = 0.5
service = "dns"
backend = "udp-1"
action = "remove"
[[change]]
at = 0.6
service = "web"
backend = "web-1"
action = "weight"
weight = 4
[[change]]
at = 0.8
service = "web"
backend = "web-2"
action = "remove"
)";

constexpr std::uint32_t host(int a, int b, int c, int d) {
  return static_cast<std::uint32_t>(a) << 24 | static_cast<std::uint32_t>(b) << 16 | static_cast<std::uint32_t>(c) << 8 |
         static_cast<std::uint32_t>(d);
}

TEST(ConcuryCli, EveryConnectionOfTheOutputGoesToOneBackendOfItsServiceAcrossPoolChanges) {
  const auto dir = std::filesystem::temp_directory_path() / ("flowtrack_concury_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "campus.pcap").string(), out = (dir / "out.pcap").string(), config = (dir / "c.toml").string();
  std::ofstream(config) << kConfig;
  // Connections arrive over a second, so that each change falls among openings and live connections.
  const auto gen = run_cli("trace gen --profile campus --flows 3000 --duration 1 -o " + trace);
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const auto r = run_cli("run --nf concury --config " + config + " --in " + trace + " --out " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::first_json_object(r.output);
  EXPECT_EQ(j["packets_in"], j["packets_out"]) << r.output;
  // Each change rewrites every service of its name: 4 VIPs x 2 ports.
  EXPECT_EQ(j["concury"]["rewrites"].get<std::uint64_t>(), 5u * 8) << r.output;
  EXPECT_EQ(j["concury"]["violations"].get<std::uint64_t>(), 0u) << r.output;
  EXPECT_EQ(j["concury"]["false_hits"].get<std::uint64_t>(), 0u) << r.output;

  const PacketStore packets = PacketStore::load_pcap(out);
  ASSERT_GT(packets.size(), 10000u);
  const std::set<std::uint32_t> web{host(10, 200, 0, 1), host(10, 200, 0, 2), host(10, 200, 0, 3), host(10, 200, 0, 4)};
  const std::set<std::uint32_t> dns{host(10, 200, 1, 1), host(10, 200, 1, 2)};
  const Nanos start = packets[0].timestamp_ns;
  const auto after = [&](const PacketView& p, double seconds) {
    return p.timestamp_ns - start >= static_cast<Nanos>(seconds * kNanosPerSecond);
  };
  // (client address, client port, protocol, backend port) -> the backends its packets went to
  std::map<std::tuple<std::uint32_t, std::uint16_t, std::uint8_t, std::uint16_t>, std::set<std::uint32_t>> connections;
  std::size_t to_backends = 0, from_vips = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    ParsedPacket p;
    ASSERT_EQ(parse_frame(packets[i].bytes, packets.link_type(), p), ParseStatus::ok) << "packet " << i;
    if (p.ip_version != 4 || !p.has_ports) continue;
    const std::uint32_t src = to_host32(p.key4.src_addr), dst = to_host32(p.key4.dst_addr);
    if ((src >> 24) == 198) ++from_vips;  // an answer, its VIP restored
    if ((src >> 24) != 10 || (dst >> 24) == 198) continue;
    ASSERT_FALSE((src >> 16) == host(10, 200, 0, 0) >> 16) << "packet " << i << ": an answer left with its backend's address";
    ++to_backends;
    const bool tcp = p.key4.protocol == ipproto::kTcp;
    ASSERT_TRUE(tcp ? web.contains(dst) : dns.contains(dst)) << "packet " << i << ": not a backend of its service";
    connections[{src, p.key4.src_port, p.key4.protocol, p.key4.dst_port}].insert(dst);
    // An opening after a drain or a removal does not reach that backend.
    const bool syn = tcp && (p.tcp_flags & (tcpflag::kSyn | tcpflag::kAck)) == tcpflag::kSyn;
    EXPECT_FALSE(syn && after(packets[i], 0.4) && dst == host(10, 200, 0, 3)) << "packet " << i;
    EXPECT_FALSE(syn && after(packets[i], 0.8) && dst == host(10, 200, 0, 2)) << "packet " << i;
  }
  EXPECT_GT(to_backends, 5000u);
  EXPECT_GT(from_vips, 5000u);
  EXPECT_GT(connections.size(), 2500u);
  std::size_t moved = 0;
  for (const auto& [connection, backends] : connections) moved += backends.size() != 1;
  EXPECT_EQ(moved, 0u) << "connections sent to more than one backend";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace flowtrack
