// `flowtrack run --nf concury` checked from the outside (and `bench compact`'s Concury under load): its
// output capture, read back and grouped by connection, sends every connection to one backend of its own service across scheduled pool changes
// of each kind (add, drain, weight, remove), and sends no connection opened after a drain or a removal
// to that backend. The check knows nothing of Concury's structures: only the configuration and the
// packets that left.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/util/time.hpp"
#include "support/cli_runner.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

// examples/lb.toml: web (TCP 443, 80 on the campus servers) on web-1..3 (10.200.0.1-3:8080), dns (UDP
// 53, 443) on udp-1..2 (10.200.1.1-2); web-4 (10.200.0.4) joins at 0.3 s, web-3 is drained at 0.5 s,
// web-1 reweighted at 0.7 s, web-2 removed at 0.8 s.
constexpr std::uint32_t host(int a, int b, int c, int d) {
  return static_cast<std::uint32_t>(a) << 24 | static_cast<std::uint32_t>(b) << 16 | static_cast<std::uint32_t>(c) << 8 |
         static_cast<std::uint32_t>(d);
}

TEST(ConcuryCli, EveryConnectionOfTheOutputGoesToOneBackendOfItsServiceAcrossPoolChanges) {
  const auto dir = std::filesystem::temp_directory_path() / ("flowtrack_concury_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "campus.pcap").string(), out = (dir / "out.pcap").string();
  const std::string config = FLOWTRACK_SOURCE_DIR "/examples/lb.toml";
  // Connections arrive over a second, so that each change falls among openings and live connections.
  const auto gen = run_cli("trace gen --profile campus --flows 3000 --duration 1 -o " + trace);
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const auto r = run_cli("run --nf concury --check --config " + config + " --in " + trace + " --out " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::first_json_object(r.output);
  EXPECT_EQ(j["packets_in"], j["packets_out"]) << r.output;
  // Each change rewrites every service of its name: 4 VIPs x 2 ports.
  EXPECT_EQ(j["concury"]["rewrites"].get<std::uint64_t>(), 4u * 8) << r.output;
  EXPECT_EQ(j["check"]["violations"].get<std::uint64_t>(), 0u) << r.output;
  EXPECT_EQ(j["check"]["false_hits"].get<std::uint64_t>(), 0u) << r.output;

  const PacketStore packets = PacketStore::load_pcap(out);
  ASSERT_GT(packets.size(), 10000u);
  const std::set<std::uint32_t> web{host(10, 200, 0, 1), host(10, 200, 0, 2), host(10, 200, 0, 3), host(10, 200, 0, 4)};
  const std::set<std::uint32_t> dns{host(10, 200, 1, 1), host(10, 200, 1, 2)};
  const Nanos start = packets[0].timestamp_ns;
  const auto after = [&](const PacketView& p, double seconds) {
    return p.timestamp_ns - start >= static_cast<Nanos>(seconds * kNanosPerSecond);
  };
  // (client address, client port, protocol) -> the backends its packets went to
  std::map<std::tuple<std::uint32_t, std::uint16_t, std::uint8_t>, std::set<std::uint32_t>> connections;
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
    connections[{src, p.key4.src_port, p.key4.protocol}].insert(dst);
    // An opening after a drain or a removal does not reach that backend.
    const bool syn = tcp && (p.tcp_flags & (tcpflag::kSyn | tcpflag::kAck)) == tcpflag::kSyn;
    EXPECT_FALSE(syn && after(packets[i], 0.5) && dst == host(10, 200, 0, 3)) << "packet " << i;
    EXPECT_FALSE(syn && after(packets[i], 0.8) && dst == host(10, 200, 0, 2)) << "packet " << i;
  }
  EXPECT_GT(to_backends, 5000u);
  EXPECT_GT(from_vips, 5000u);
  EXPECT_GT(connections.size(), 2500u);
  std::size_t moved = 0;
  for (const auto& [connection, backends] : connections) moved += backends.size() != 1;
  EXPECT_EQ(moved, 0u) << "connections sent to more than one backend";

  // The control plane on a thread of its own learns the same connections in the same order, and the
  // worker asks it only where it has caught up: the same capture out, byte for byte, the same counts.
  const std::string out_thread = (dir / "out-thread.pcap").string();
  const auto t = run_cli("run --nf concury --control-plane thread --config " + config + " --in " + trace + " --out " + out_thread +
                         " --json");
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const auto jt = testing::first_json_object(t.output);
  EXPECT_EQ(jt["control_plane"], "thread");
  for (const char* field : {"concury", "backends", "connections", "connections_live", "packets_out"}) {
    EXPECT_EQ(jt[field], j[field]) << field;
  }
  const auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_TRUE(bytes(out_thread) == bytes(out)) << "the two captures differ";
  std::filesystem::remove_all(dir);
}

// examples/concury-own-backends.toml: sixteen services, each on backends of its own, so a backend's
// answer names its service and the worker needs its control plane only at its pool changes (and pins).
TEST(ConcuryCli, WithABackendPoolPerServiceTheWorkerWaitsForItsControlPlaneOnlyAtPoolChanges) {
  const auto dir = std::filesystem::temp_directory_path() / ("flowtrack_concury_own_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "campus.pcap").string();
  ASSERT_EQ(run_cli("trace gen --profile campus --flows 3000 --duration 3 -o " + trace).exit_code, 0);
  const auto r = run_cli("run --nf concury --check --control-plane thread --config " FLOWTRACK_SOURCE_DIR
                         "/examples/concury-own-backends.toml --in " + trace + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::first_json_object(r.output);
  EXPECT_EQ(j["packets_in"], j["packets_out"]) << r.output;
  EXPECT_EQ(j["concury"]["rewrites"].get<std::uint64_t>(), 3u) << r.output;
  EXPECT_EQ(j["check"]["violations"].get<std::uint64_t>(), 0u) << r.output;
  // One sync at each change time, and one for each opening that lands on a drained backend's pin:
  // fewer than one packet in a thousand (with examples/lb.toml's shared backends, over two in five).
  EXPECT_GE(j["concury"]["syncs"].get<std::uint64_t>(), 3u) << r.output;
  EXPECT_LT(j["concury"]["syncs"].get<std::uint64_t>() * 1000, j["packets_in"].get<std::uint64_t>()) << r.output;
  EXPECT_EQ(j["backends"].size(), 49u) << r.output;  // 16 services x 3 backends, and the one added
  std::filesystem::remove_all(dir);
}

// A trace of several windows reuses client endpoints: a connection opens on the endpoints of one that an
// earlier window met, answered, on a backend drained since. Read from the output: after
// examples/concury-own-backends.toml's drain (web-1-443-1, 10.201.1.1, at 0.5 s) and removal
// (web-2-80-2, 10.201.6.2, at 2 s), no SYN reaches either backend, and the consistency check (--check) sees
// no false hit. Twenty thousand flows, where a SYN on known endpoints that followed the old connection sent
// eight such SYNs to the drained backend: the release tree only, for time (the sanitizer trees run the paths it takes in
// the ConcuryLearning and ConcuryLb tests).
TEST(ConcuryCli, NoNewConnectionOnReusedEndpointsReachesADrainedOrRemovedBackend) {
#ifdef FLOWTRACK_SANITIZED
  GTEST_SKIP() << "release tree only";
#endif
  const auto dir = std::filesystem::temp_directory_path() / ("flowtrack_concury_reuse_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "campus.pcap").string(), out = (dir / "out.pcap").string();
  ASSERT_EQ(run_cli("trace gen --profile campus --windows 4 --flows 20000 -o " + trace).exit_code, 0);
  const auto r = run_cli("run --nf concury --check --config " FLOWTRACK_SOURCE_DIR "/examples/concury-own-backends.toml --in " +
                         trace + " --out " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::first_json_object(r.output);
  EXPECT_EQ(j["check"]["false_hits"].get<std::uint64_t>(), 0u) << r.output;
  const std::map<std::uint32_t, double> gone{{host(10, 201, 1, 1), 0.5}, {host(10, 201, 6, 2), 2.0}};  // backend -> since
  const PacketStore packets = PacketStore::load_pcap(out);
  ASSERT_GT(packets.size(), 0u);
  const Nanos start = packets[0].timestamp_ns;
  std::set<std::pair<std::uint32_t, std::uint16_t>> seen;  // client endpoints met so far
  std::size_t syns = 0, syns_on_seen_endpoints = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    ParsedPacket p;
    ASSERT_EQ(parse_frame(packets[i].bytes, packets.link_type(), p), ParseStatus::ok) << "packet " << i;
    if (p.ip_version != 4 || p.key4.protocol != ipproto::kTcp || (to_host32(p.key4.dst_addr) >> 16) != host(10, 201, 0, 0) >> 16) continue;
    const std::pair<std::uint32_t, std::uint16_t> client{p.key4.src_addr, p.key4.src_port};
    if ((p.tcp_flags & (tcpflag::kSyn | tcpflag::kAck)) == tcpflag::kSyn) {
      ++syns;
      syns_on_seen_endpoints += seen.contains(client);
      const auto it = gone.find(to_host32(p.key4.dst_addr));
      EXPECT_FALSE(it != gone.end() && packets[i].timestamp_ns - start >= static_cast<Nanos>(it->second * kNanosPerSecond))
          << "packet " << i << ": a SYN to a backend that takes no new connections";
    }
    seen.insert(client);
  }
  EXPECT_GT(syns, 1000u);
  EXPECT_GT(syns_on_seen_endpoints, 0u);  // the windows did reuse endpoints
  std::filesystem::remove_all(dir);
}

TEST(ConcuryCli, AControlPlaneThreadIsConcurysAlone) {
  const auto r = run_cli("run --nf lb --control-plane thread --config " FLOWTRACK_SOURCE_DIR "/examples/lb.toml --in /dev/null");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--control-plane is Concury's"), std::string::npos) << r.output;
}

// `bench compact --arrivals`: Concury's lookups under arrivals and DIP changes, for both places of its
// control plane and both populations (steady: each arrival departs the oldest connection of its VIP;
// growing), each against the static lookups of the same run. Every connection held afterwards is
// answered with the DIP its control plane holds, and no other connection is known to the control plane:
// reports learnt late (after their VIP's arrays were handed over again: only a control plane on its own
// thread has those) are repaired, and repairs are counted among them.
TEST(ConcuryCli, BenchCompactUnderLoadReportsLookupsArrivalsDeparturesAndDipChanges) {
  for (const std::string where : {"", " --same-core"}) {
    for (const std::string population : {"", " --no-departures"}) {
      const auto r = run_cli("bench compact --structures concury --sizes 4096 --reps 1 --queries 16384 --arrivals 20000 "
                             "--dynamic-seconds 0.3 --dip-change-every 0.1 --json" + where + population);
      ASSERT_EQ(r.exit_code, 0) << r.output;
      std::size_t dynamic = 0;
      std::uint64_t wrong = 0;
      for (const nlohmann::json& j : testing::json_lines(r.output)) {
        if (j["mode"] != "dynamic") {
          wrong = std::max(wrong, j["wrong_answers"].get<std::uint64_t>());
          continue;
        }
        const auto late = j["late_reports"].get<std::uint64_t>();
        EXPECT_LE(j["repaired_reports"].get<std::uint64_t>(), late) << j;
        if (!where.empty()) {
          EXPECT_EQ(late, 0u) << j;
        }
        ++dynamic;
        EXPECT_EQ(j["control_plane"], where.empty() ? "own-thread" : "same-core") << j;
        EXPECT_EQ(j["population"], population.empty() ? "steady" : "growing") << j;
        EXPECT_GT(j["lookup_mqps"].get<double>(), 0.0) << j;
        EXPECT_GT(j["static_mqps"].get<double>(), 0.0) << j;
        EXPECT_GE(j["dip_changes"].get<std::uint64_t>(), 1u) << j;
        // Every arrival of the window (20 000 a second for 0.3 s: 6 000, to a rounding of the product),
        // learnt or still on its way, however slowly the run went; one departure a connection learnt.
        EXPECT_GE(j["learnt"].get<std::uint64_t>() + j["reports_behind"].get<std::uint64_t>(), 5999u) << j;
        EXPECT_EQ(j["departed"].get<std::uint64_t>(), population.empty() ? j["learnt"].get<std::uint64_t>() : 0u) << j;
      }
      EXPECT_EQ(dynamic, 1u) << r.output;
      EXPECT_EQ(wrong, 0u) << r.output;
    }
  }
}

// `bench compact` with Concury and the Maglev-style table: beside each structure's own rows, their bulk
// lookups timed in alternating rounds, one line a size with the median ratio and its spread.
TEST(ConcuryCli, BenchCompactTimesConcuryAndTheMaglevStyleTableInAlternation) {
  const auto r = run_cli("bench compact --structures concury,maglev-digest --sizes 1024,4096 --reps 1 --queries 16384 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::uint64_t> sizes;
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    if (j["mode"] != "bulk-paired") continue;
    sizes.push_back(j["keys"].get<std::uint64_t>());
    EXPECT_EQ(j["structure"], "concury/maglev-digest") << j;
    EXPECT_GT(j["concury_mqps"].get<double>(), 0.0) << j;
    EXPECT_GT(j["maglev_mqps"].get<double>(), 0.0) << j;
    EXPECT_LE(j["ratio_min"].get<double>(), j["ratio"].get<double>()) << j;
    EXPECT_LE(j["ratio"].get<double>(), j["ratio_max"].get<double>()) << j;
    EXPECT_GE(j["rounds"].get<std::uint64_t>(), 2u) << j;
  }
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{1024, 4096})) << r.output;
}

// `--concury-layout` chooses the arrays' layout; by default it follows the size (pairs while they fit a
// core's share of the cache, as at these sizes). Every row says which, and every stored connection
// gets its DIP in both.
TEST(ConcuryCli, BenchCompactMeasuresTheLayoutItIsGivenOrTheSizeChooses) {
  for (const std::string layout : {"", "pairs", "blocks"}) {
    const auto r = run_cli("bench compact --structures concury,maglev-digest --sizes 4096 --reps 1 --queries 16384 --json" +
                           (layout.empty() ? std::string() : " --concury-layout " + layout));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::size_t rows = 0;
    for (const nlohmann::json& j : testing::json_lines(r.output)) {
      if (j["structure"] == "maglev-digest") continue;
      ++rows;
      EXPECT_EQ(j["layout"], layout.empty() ? "pairs" : layout) << j;
      if (j["mode"] != "bulk-paired") {
        EXPECT_EQ(j["wrong_answers"].get<std::uint64_t>(), 0u) << j;
      }
    }
    EXPECT_EQ(rows, 3u) << r.output;  // single, bulk, paired
  }
  EXPECT_NE(run_cli("bench compact --structures concury --concury-layout diagonal").exit_code, 0);
}

}  // namespace
}  // namespace flowtrack
