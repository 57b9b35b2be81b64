// The live data plane's [dataplane] table (nf/dataplane_config.hpp): ports, gateways, configured
// neighbours, the stats interval, the metrics listener, the ports' roles as each function needs them;
// errors naming the key; the live examples loading.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "support/addresses.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

constexpr const char* kTwoPorts = R"([dataplane]
stats_interval = 5
metrics = "127.0.0.1:9469"
rx_queues = 1
mbufs = 4000000
mbuf_size = 256
[[dataplane.port]]
device = "net_af_packet0"
address = "10.10.1.1/24"
[[dataplane.port]]
device = "0000:03:00.0"
address = "192.0.2.1/30"
gateway = "192.0.2.2"
[[dataplane.neighbor]]
address = "192.0.2.2"
mac = "02:00:00:00:00:2a"
)";

TEST(DataplaneConfig, PortsGatewaysNeighboursIntervalAndPoolAreRead) {
  const DataplaneConfig c = load_dataplane_config(test::temp_config("plane.toml", kTwoPorts), "fwd");
  EXPECT_EQ(c.stats_interval, 5 * kNanosPerSecond);
  EXPECT_EQ(c.rx_queues, 1u);
  EXPECT_EQ(c.mbufs, 4'000'000u);
  EXPECT_EQ(c.mbuf_size, 256);
  ASSERT_TRUE(c.metrics);
  EXPECT_EQ(c.metrics->address, test::ipv4("127.0.0.1"));
  EXPECT_EQ(c.metrics->port, 9469);
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].device, "net_af_packet0");
  EXPECT_EQ(c.ports[0].address, test::ipv4("10.10.1.1"));
  EXPECT_EQ(c.ports[0].prefix_length, 24);
  EXPECT_EQ(c.ports[0].gateway, 0u);
  EXPECT_EQ(c.ports[1].device, "0000:03:00.0");
  EXPECT_EQ(c.ports[1].prefix_length, 30);
  EXPECT_EQ(c.ports[1].gateway, test::ipv4("192.0.2.2"));
  ASSERT_EQ(c.neighbors.size(), 1u);
  EXPECT_EQ(c.neighbors[0].address, test::ipv4("192.0.2.2"));
  EXPECT_EQ(c.neighbors[0].mac, (MacAddress{0x02, 0, 0, 0, 0, 0x2a}));
}

TEST(DataplaneConfig, AFunctionsLoaderAcceptsTheTableBesideItsOwn) {
  const std::string text = std::string("[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\"]\n") + kTwoPorts;
  EXPECT_EQ(load_nat_config(test::temp_config("plane.toml", text)).pool.size(), 1u);
}

TEST(DataplaneConfig, AMistakeNamesTheKey) {
  const std::string port = "[dataplane]\n[[dataplane.port]]\ndevice = \"net_null0\"\n";
  for (const auto& [text, key] : {
           std::pair{std::string("[lb]\n"), "dataplane: missing"},
           {std::string("[dataplane]\n"), "dataplane.port"},
           {port, "dataplane.port.address: missing"},
           {port + "address = \"10.0.0.1\"\n", "dataplane.port.address: '10.0.0.1' is not a prefix"},
           {port + "address = \"10.0.0.1/33\"\n", "dataplane.port.address"},
           {port + "address = \"10.0.0.1/24\"\ngateway = \"ten\"\n", "dataplane.port.gateway"},
           {port + "address = \"10.0.0.1/24\"\nmtu = 9000\n", "dataplane.port.mtu: unknown key"},
           {port + "address = \"10.0.0.1/24\"\n[[dataplane.neighbor]]\naddress = \"10.0.0.2\"\nmac = \"02:00:00:00:00\"\n",
            "dataplane.neighbor.mac: '02:00:00:00:00' is not a MAC address"},
           {"[dataplane]\nstats_interval = 0\n", "dataplane.stats_interval"},
           {"[dataplane]\nrx_queues = -1\n", "dataplane.rx_queues: expected an integer in 0..1024"},
           {"[dataplane]\nmbufs = 2000000000\n", "dataplane.mbufs"},
           {"[dataplane]\nmbuf_size = 65408\n", "dataplane.mbuf_size: expected an integer in 64..65407"},
           {"[dataplane]\nmetrics = \"127.0.0.1\"\n", "dataplane.metrics: '127.0.0.1' is not an IPv4 address and port"},
           {"[dataplane]\nmetrics = \"127.0.0.1:65536\"\n", "dataplane.metrics"},
           {"[dataplane]\nmetrics = \"localhost:9469\"\n", "dataplane.metrics"},
           {"[dataplane]\nmetrics = \"127.0.0.1:99999999999999999999\"\n", "dataplane.metrics"},
       }) {
    try {
      load_dataplane_config(test::temp_config("plane.toml", text), "fwd");
      ADD_FAILURE() << text << "loaded";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

constexpr const char* kNatPorts = R"([dataplane]
[[dataplane.port]]
device = "net_af_packet0"
address = "10.20.1.1/24"
role = "inside"
[[dataplane.port]]
device = "net_af_packet1"
address = "10.20.2.1/24"
role = "outside"
[dataplane.pair]
key_file = "/etc/flowtrack/pair.key"
)";

TEST(DataplaneConfig, ANatPairsSyncLinkRoleAndTimersAreRead) {
  const std::string text = std::string(kNatPorts) + "role = \"active\"\nlocal = \"192.0.2.1:7400\"\npeer = \"192.0.2.2:7401\"\n" +
                           "dead_interval_ms = 250\nsync = false\n";
  const DataplaneConfig c = load_dataplane_config(test::temp_config("pair.toml", text), "nat");
  ASSERT_TRUE(c.pair);
  EXPECT_EQ(c.pair->role, PairConfig::Role::active);
  EXPECT_EQ(c.pair->local.address, test::ipv4("192.0.2.1"));
  EXPECT_EQ(c.pair->local.port, 7400);
  EXPECT_EQ(c.pair->peer.address, test::ipv4("192.0.2.2"));
  EXPECT_EQ(c.pair->peer.port, 7401);
  EXPECT_EQ(c.pair->key_file, "/etc/flowtrack/pair.key");
  EXPECT_EQ(c.pair->dead_interval, 250 * kNanosPerMilli);
  EXPECT_FALSE(c.pair->sync);
  const std::string standby = std::string(kNatPorts) + "role = \"standby\"\nlocal = \"192.0.2.2:7400\"\npeer = \"192.0.2.1:7400\"\n";
  const DataplaneConfig d = load_dataplane_config(test::temp_config("pair.toml", standby), "nat");
  ASSERT_TRUE(d.pair);
  EXPECT_EQ(d.pair->role, PairConfig::Role::standby);
  EXPECT_EQ(d.pair->dead_interval, 400 * kNanosPerMilli);
  EXPECT_TRUE(d.pair->sync);
  EXPECT_FALSE(load_dataplane_config(test::temp_config("plane.toml", kTwoPorts), "fwd").pair);
}

TEST(DataplaneConfig, ANatPairMistakeNamesTheKey) {
  const std::string ends = "local = \"192.0.2.1:7400\"\npeer = \"192.0.2.2:7400\"\n";
  for (const auto& [text, key] : {
           std::pair{std::string(kNatPorts) + ends, "dataplane.pair.role: missing"},
           {std::string(kNatPorts) + "role = \"primary\"\n" + ends, "dataplane.pair.role: expected \"active\" or \"standby\""},
           {std::string(kNatPorts) + "role = \"active\"\npeer = \"192.0.2.2:7400\"\n", "dataplane.pair.local: missing"},
           {std::string(kNatPorts) + "role = \"active\"\nlocal = \"192.0.2.1:7400\"\n", "dataplane.pair.peer: missing"},
           {std::string(kNatPorts) + "role = \"active\"\nlocal = \"192.0.2.1\"\npeer = \"192.0.2.2:7400\"\n",
            "dataplane.pair.local: '192.0.2.1' is not an IPv4 address and port"},
           {std::string(kNatPorts) + "role = \"active\"\nlocal = \"192.0.2.1:7400\"\npeer = \"192.0.2.1:7400\"\n",
            "dataplane.pair.peer: the same address and port as local"},
           {std::string(kNatPorts) + "role = \"active\"\n" + ends + "dead_interval_ms = 10\n", "dataplane.pair.dead_interval_ms"},
           {std::string(kNatPorts) + "role = \"active\"\n" + ends + "priority = 1\n", "dataplane.pair.priority: unknown key"},
       }) {
    try {
      load_dataplane_config(test::temp_config("pair.toml", text), "nat");
      ADD_FAILURE() << text << "loaded";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  const std::string lb = "[dataplane]\n[[dataplane.port]]\ndevice = \"net_null0\"\naddress = \"10.0.0.1/24\"\n[dataplane.pair]\nrole = \"active\"\n";
  try {
    load_dataplane_config(test::temp_config("pair.toml", lb), "fwd");
    ADD_FAILURE() << "a pair for fwd loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dataplane.pair: nf fwd runs no pair"), std::string::npos) << e.what();
  }
}

constexpr const char* kLbPorts = R"([dataplane]
[[dataplane.port]]
device = "net_af_packet0"
address = "10.30.1.11/24"
role = "clients"
[[dataplane.port]]
device = "net_af_packet1"
address = "10.30.2.21/24"
role = "backends"
[dataplane.peers]
key_file = "/etc/flowtrack/peers.key"
)";

TEST(DataplaneConfig, AnLbsPeersAreRead) {
  const std::string text = std::string(kLbPorts) + "local = \"10.30.1.21:7410\"\npeers = [\"10.30.1.22:7410\", \"10.30.1.23:7411\"]\n" +
                           "dead_interval_ms = 200\nmax_exceptions = 5000\n";
  const DataplaneConfig c = load_dataplane_config(test::temp_config("peers.toml", text), "lb");
  ASSERT_TRUE(c.peers);
  EXPECT_EQ(c.peers->local.address, test::ipv4("10.30.1.21"));
  EXPECT_EQ(c.peers->local.port, 7410);
  ASSERT_EQ(c.peers->peers.size(), 2U);
  EXPECT_EQ(c.peers->peers[1].address, test::ipv4("10.30.1.23"));
  EXPECT_EQ(c.peers->peers[1].port, 7411);
  EXPECT_EQ(c.peers->key_file, "/etc/flowtrack/peers.key");
  EXPECT_EQ(c.peers->dead_interval, 200 * kNanosPerMilli);
  EXPECT_EQ(c.peers->max_exceptions, 5000U);
  const std::string one = std::string(kLbPorts) + "local = \"10.30.1.21:7410\"\npeers = \"10.30.1.22:7410\"\n";
  const DataplaneConfig d = load_dataplane_config(test::temp_config("peers.toml", one), "lb");
  ASSERT_TRUE(d.peers);
  EXPECT_EQ(d.peers->peers.size(), 1U);
  EXPECT_EQ(d.peers->dead_interval, 400 * kNanosPerMilli);
}

TEST(DataplaneConfig, AnLbsPeersMistakeNamesTheKey) {
  const std::string local = "local = \"10.30.1.21:7410\"\n";
  for (const auto& [text, key] : {
           std::pair{std::string(kLbPorts) + local, "dataplane.peers.peers: missing"},
           {std::string(kLbPorts) + "peers = \"10.30.1.22:7410\"\n", "dataplane.peers.local: missing"},
           {std::string(kLbPorts) + local + "peers = []\n", "dataplane.peers.peers: empty array"},
           {std::string(kLbPorts) + local + "peers = [7410]\n", "dataplane.peers.peers: expected \"address:port\" strings"},
           {std::string(kLbPorts) + local + "peers = [\"10.30.1.22\"]\n", "dataplane.peers.peers: '10.30.1.22' is not an IPv4 address and port"},
           {std::string(kLbPorts) + local + "peers = [\"10.30.1.21:7410\"]\n", "dataplane.peers.peers: the same address and port as local"},
           {std::string(kLbPorts) + local + "peers = [\"10.30.1.22:7410\", \"10.30.1.22:7410\"]\n", "dataplane.peers.peers: a peer listed twice"},
           {std::string(kLbPorts) + local + "peers = \"10.30.1.22:7410\"\nmax_exceptions = 0\n", "dataplane.peers.max_exceptions"},
           {std::string(kLbPorts) + local + "peers = \"10.30.1.22:7410\"\nrole = \"active\"\n", "dataplane.peers.role: unknown key"},
       }) {
    try {
      load_dataplane_config(test::temp_config("peers.toml", text), "lb");
      ADD_FAILURE() << text << "loaded";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  try {
    load_dataplane_config(test::temp_config("peers.toml", std::string(kNatPorts) + "role = \"active\"\nlocal = \"192.0.2.1:7400\"\n"
                                                                                   "peer = \"192.0.2.2:7400\"\n[dataplane.peers]\n"),
                          "nat");
    ADD_FAILURE() << "peers for nat loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dataplane.peers: nf nat shares no connections with peers"), std::string::npos) << e.what();
  }
}

TEST(DataplaneConfig, MacAddressesParseInEitherNotationOnly) {
  EXPECT_EQ(parse_mac("0a:1B:2c:3D:4e:5F"), (MacAddress{0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f}));
  EXPECT_EQ(parse_mac("0a-1b-2c-3d-4e-5f"), (MacAddress{0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f}));
  for (const char* bad : {"", "0a:1b:2c:3d:4e", "0a:1b:2c:3d:4e:5g", "0a:1b:2c:3d:4e:5f:", "0a.1b.2c.3d.4e.5f", "+a:1b:2c:3d:4e:5f"}) {
    EXPECT_FALSE(parse_mac(bad)) << bad;
  }
  EXPECT_EQ(mac_to_string({0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f}), "0a:1b:2c:3d:4e:5f");
}

// The error `text` gets when loaded for `nf` (empty if it loads).
std::string plane_error(const std::string& text, std::string_view nf) {
  try {
    load_dataplane_config(test::temp_config("plane.toml", text), nf);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string two_ports(const std::string& first_role, const std::string& second_role) {
  return "[dataplane]\n[[dataplane.port]]\ndevice = \"net_null0\"\naddress = \"10.0.1.1/24\"\n" + first_role +
         "[[dataplane.port]]\ndevice = \"net_null1\"\naddress = \"10.0.2.1/24\"\n" + second_role;
}

TEST(DataplaneConfig, EachPortOfTheNatAndTheLbFacesOneSide) {
  const DataplaneConfig nat = load_dataplane_config(test::temp_config("plane.toml", two_ports("role = \"outside\"\n", "role = \"inside\"\n")), "nat");
  EXPECT_EQ(nat.ports[0].role, PortRole::outside);
  EXPECT_EQ(nat.ports[1].role, PortRole::inside);
  const DataplaneConfig lb = load_dataplane_config(test::temp_config("plane.toml", two_ports("role = \"clients\"\n", "role = \"backends\"\n")), "lb");
  EXPECT_EQ(lb.ports[0].role, PortRole::clients);
  EXPECT_EQ(lb.ports[1].role, PortRole::backends);
  EXPECT_EQ(load_dataplane_config(test::temp_config("plane.toml", two_ports("", "")), "slb").ports[0].role, PortRole::unknown);
}

TEST(DataplaneConfig, WithoutThemEveryWorkerPollsAndThePoolIsWhatThePortsNeed) {
  const DataplaneConfig c = load_dataplane_config(test::temp_config("plane.toml", two_ports("", "")), "fwd");
  EXPECT_EQ(c.rx_queues, 0u);
  EXPECT_EQ(c.mbufs, 0u);
  EXPECT_EQ(c.mbuf_size, kDefaultMbufSize);
}

TEST(DataplaneConfig, ARoleMissingOrWrongIsRefusedWithWhatToAdd) {
  const std::string inside = "role = \"inside\"\n";
  for (const auto& [text, nf, message] : {
           std::tuple{two_ports("", ""), "nat",
                      ":2: dataplane.port.role: missing: nf nat needs one port with role = \"inside\" (the private network) and one "
                      "with role = \"outside\" (the public side, where the pool is)"},
           {two_ports(inside, ""), "nat", ":6: dataplane.port.role: missing"},
           {two_ports(inside, inside), "nat", ":9: dataplane.port.role: 'inside' is another port's role too"},
           {two_ports(inside, "role = \"backends\"\n"), "nat", "dataplane.port.role: nf nat needs one port with role = \"inside\""},
           {two_ports("role = \"outside\"\n", "role = \"clients\"\n"), "lb", "nf lb needs one port with role = \"clients\""},
           {two_ports("", ""), "lb", "dataplane.port.role: missing: nf lb needs one port with role = \"clients\" (the clients, who"},
           {two_ports(inside, ""), "fwd", ":5: dataplane.port.role: nf fwd takes no port role (nat, lb and concury do)"},
           {"[dataplane]\n[[dataplane.port]]\ndevice = \"net_null0\"\naddress = \"10.0.1.1/24\"\n" + inside, "nat",
            "dataplane.port: nf nat needs 2 ports: one with role = \"inside\""},
       }) {
    const std::string error = plane_error(text, nf);
    EXPECT_NE(error.find(message), std::string::npos) << nf << ": " << error;
  }
}

TEST(DataplaneConfig, TheLiveExamplesLoad) {
  for (const auto& [name, nf] : {std::pair{"/examples/live-lb.toml", "lb"}, {"/examples/live-nat.toml", "nat"}}) {
    const DataplaneConfig c = load_dataplane_config(std::string(FLOWTRACK_SOURCE_DIR) + name, nf);
    ASSERT_EQ(c.ports.size(), 2u) << name;
    EXPECT_EQ(c.ports[0].role, port_roles_of(nf)[0]) << name;  // the private or the clients' side first
  }
  EXPECT_EQ(load_stateful_lb_config(FLOWTRACK_SOURCE_DIR "/examples/live-lb.toml").services.size(), 1u);
  EXPECT_EQ(load_nat_config(FLOWTRACK_SOURCE_DIR "/examples/live-nat.toml").pool.size(), 1u);
}

}  // namespace
}  // namespace flowtrack
