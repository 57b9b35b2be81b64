// Configurations that contradict themselves, refused with file:line and key (nf/nf_config.hpp): one
// name or one VIP, port and protocol for two services, addresses no host can have, a NAT pool inside
// its own inside network, ports that overlap, a gateway no port reaches; the bounds on services and
// pool changes; and the NAT's timeouts against the RFC minimums, taken below them only when the
// configuration says so.
#include <gtest/gtest.h>

#include <string>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/nf_config.hpp"

namespace flowtrack {
namespace {

// Lines 1-7: one service on two VIPs, one backend.
constexpr const char* kWebService =
    "[[service]]\nname = \"web\"\nvip = [\"198.18.0.1\", \"198.18.0.2\"]\nport = 443\n"
    "  [[service.backend]]\n  name = \"web-1\"\n  address = \"10.200.0.1\"\n";

// Another service from line 8: its name on line 9, its VIP on 10, port 11, protocol 12, backend 13-15.
std::string second_service(const std::string& name, const std::string& vip, const std::string& protocol,
                           const std::string& backend = "10.200.0.9") {
  return "[[service]]\nname = \"" + name + "\"\nvip = \"" + vip + "\"\nport = 443\nprotocol = \"" + protocol +
         "\"\n  [[service.backend]]\n  name = \"x\"\n  address = \"" + backend + "\"\n";
}

// The ConfigError the loader of `load` gives `text` as `name`, or "" when it loads.
template <class Load>
std::string refusal(Load&& load, const std::string& name, const std::string& text) {
  try {
    load(ConfigText{name, text});
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

std::string lb_refusal(const std::string& text) {
  return refusal([](const ConfigText& t) { return load_stateful_lb_config(t); }, "lb.toml", text);
}
std::string nat_refusal(const std::string& text) {
  return refusal([](const ConfigText& t) { return load_nat_config(t); }, "nat.toml", text);
}
std::string plane_refusal(const std::string& text) {
  return refusal([](const ConfigText& t) { return load_dataplane_config(t, "fwd"); }, "plane.toml", text);
}

TEST(ConfigContradiction, TwoServicesOfOneNameOrOnOneEndpoint) {
  EXPECT_EQ(lb_refusal(std::string(kWebService) + second_service("web", "198.18.0.9", "tcp")),
            "lb.toml:9: service.name: 'web' is the name of the service at line 2 too");
  EXPECT_EQ(lb_refusal(std::string(kWebService) + second_service("api", "198.18.0.2", "tcp")),
            "lb.toml:10: service.vip: 198.18.0.2 port 443 tcp is service 'web''s (line 3) already");
  // The same VIP and port over UDP is another service; so is another port.
  EXPECT_EQ(lb_refusal(std::string(kWebService) + second_service("dns", "198.18.0.2", "udp")), "");
  // One [[service]] naming a VIP twice.
  std::string twice = kWebService;
  twice.replace(twice.find("198.18.0.2"), 10, "198.18.0.1");
  EXPECT_EQ(lb_refusal(twice), "lb.toml:3: service.vip: 198.18.0.1 port 443 tcp is service 'web''s (line 3) already");
  // The stateless LB reads the services the same way.
  EXPECT_EQ(refusal([](const ConfigText& t) { return load_stateless_lb_config(t); }, "slb.toml",
                    std::string(kWebService) + second_service("web", "198.18.0.9", "udp")),
            "slb.toml:9: service.name: 'web' is the name of the service at line 2 too");
}

TEST(ConfigContradiction, AnAddressNoHostCanHaveIsRefusedWhereAHostIsMeant) {
  const std::pair<const char*, const char*> addresses[] = {
      {"0.0.0.0", "0.0.0.0/8 means this network, no host"}, {"0.1.2.3", "0.0.0.0/8 means this network, no host"},
      {"255.255.255.255", "it is the broadcast address"},   {"127.0.0.1", "127.0.0.0/8 is loopback"},
      {"224.0.0.5", "224.0.0.0/4 is multicast"},            {"239.255.1.1", "224.0.0.0/4 is multicast"}};
  for (const auto& [address, why] : addresses) {
    const std::string reason = std::string("'") + address + "' cannot be a host's address: " + why;
    EXPECT_EQ(lb_refusal(std::string(kWebService) + second_service("api", address, "tcp")), "lb.toml:10: service.vip: " + reason);
    EXPECT_EQ(lb_refusal(std::string(kWebService) + second_service("api", "198.18.0.7", "tcp", address)),
              "lb.toml:15: service.backend.address: " + reason);
    EXPECT_EQ(lb_refusal(std::string(kWebService) + "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"web-2\"\naction = \"add\"\n" +
                         "address = \"" + address + "\"\n"),
              "lb.toml:13: change.address: " + reason);
    EXPECT_EQ(nat_refusal(std::string("[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\", \"") + address + "\"]\n"),
              "nat.toml:3: nat.pool: " + reason);
  }
}

TEST(ConfigContradiction, APoolAddressInsideTheInsideNetworkOrTwice) {
  EXPECT_EQ(nat_refusal("[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\", \"10.0.3.4\"]\n"),
            "nat.toml:3: nat.pool: '10.0.3.4' is inside the inside network 10.0.0.0/16: a public address is outside it");
  EXPECT_EQ(nat_refusal("[nat]\ninside = \"10.0.0.0/16\"\npool = \"10.0.0.1\"\n"),
            "nat.toml:3: nat.pool: '10.0.0.1' is inside the inside network 10.0.0.0/16: a public address is outside it");
  EXPECT_EQ(nat_refusal("[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\", \"203.0.113.1\"]\n"),
            "nat.toml:3: nat.pool: '203.0.113.1' appears twice");
  EXPECT_EQ(nat_refusal("[nat]\ninside = \"10.0.0.0/16\"\npool = [\"10.1.0.1\"]\n"), "");
}

// Port 0 on lines 2-4, port 1 from line 5 (its address on line 7, its gateway on 8).
std::string ports_at(const std::string& first, const std::string& second, const std::string& gateway = "") {
  return "[dataplane]\n[[dataplane.port]]\ndevice = \"p0\"\naddress = \"" + first + "\"\n[[dataplane.port]]\ndevice = \"p1\"\naddress = \"" +
         second + "\"\n" + (gateway.empty() ? "" : "gateway = \"" + gateway + "\"\n");
}

TEST(ConfigContradiction, PortsOnOneAddressOrOverlappingNetworks) {
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.1.1/24")), "plane.toml:7: dataplane.port.address: '10.10.1.1' is port 0's address too");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.1.2/24")),
            "plane.toml:7: dataplane.port.address: 10.10.1.0/24 overlaps port 0's network 10.10.1.0/24: an address must be on one port only");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.0.1/16")),
            "plane.toml:7: dataplane.port.address: 10.10.0.0/16 overlaps port 0's network 10.10.1.0/24: an address must be on one port only");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.0/24", "10.10.2.1/24")),
            "plane.toml:4: dataplane.port.address: '10.10.1.0' is the network address of 10.10.1.0/24, no host's");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.2.255/24")),
            "plane.toml:7: dataplane.port.address: '10.10.2.255' is the broadcast address of 10.10.2.0/24, no host's");
  EXPECT_EQ(plane_refusal(ports_at("127.0.0.1/8", "10.10.2.1/24")),
            "plane.toml:4: dataplane.port.address: '127.0.0.1' cannot be a host's address: 127.0.0.0/8 is loopback");
  // A point-to-point /31 has no network or broadcast address.
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "192.0.2.0/31")), "");
}

TEST(ConfigContradiction, AGatewayOnNoPortsNetwork) {
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.2.1/24", "10.10.3.254")),
            "plane.toml:8: dataplane.port.gateway: '10.10.3.254' is on no port's network (10.10.1.0/24, 10.10.2.0/24): a next hop is "
            "directly attached");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.2.1/24", "10.10.1.1")),
            "plane.toml:8: dataplane.port.gateway: '10.10.1.1' is port 0's own address");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.2.1/24", "10.10.2.254")), "");
  EXPECT_EQ(plane_refusal(ports_at("10.10.1.1/24", "10.10.2.1/24", "10.10.1.254")), "");  // reached through the other port
}

TEST(ConfigBoundsOfLists, ServicesAndPoolChangesAreBounded) {
  std::string vips, ports;
  for (int i = 0; i < 300; ++i) {
    vips += (i ? ",\n\"10.1." : "\"10.1.") + std::to_string(i / 200) + "." + std::to_string(1 + i % 200) + "\"";
    ports += (i ? ",\n" : "") + std::to_string(1000 + i);
  }
  EXPECT_EQ(lb_refusal("[[service]]\nname = \"many\"\nvip = [" + vips + "]\nport = [" + ports +
                       "]\n  [[service.backend]]\n  name = \"b\"\n  address = \"10.200.0.1\"\n"),
            "lb.toml:3: service.vip: 0 services so far and 300 VIPs x 300 ports here: at most 65536 services in all");
  // The bound on [[change]] tables (kMaxPoolChanges) is checked at the command line, in the release tree
  // (inputs_cli_test.cpp): its 50 000 lines took this test 29 s of toml11 at -O0 under ASan.
  // Each change refills its service's table: 64 changes to a 16M-entry table are the most.
  std::string large = std::string("[lb]\nmaglev_size = 16777213\n") + kWebService;
  for (int i = 0; i < 65; ++i) large += "[[change]]\nat=1\nservice=\"web\"\nbackend=\"web-1\"\naction=\"drain\"\n";
  const std::string refused = lb_refusal(large);
  EXPECT_NE(refused.find(": change: 65 [[change]] tables each refill a Maglev table of 16777213 entries: 1090518845 entries in all, "
                         "at most 1073741824 (fewer changes or a smaller maglev_size)"),
            std::string::npos)
      << refused;
  large.resize(large.rfind("[[change]]"));
  EXPECT_EQ(lb_refusal(large), "");
}

constexpr const char* kNatHead = "[nat]\ninside = \"10.0.0.0/16\"\npool = \"203.0.113.1\"\n";

TEST(NatRfcMinimums, ATimeoutBelowItsMinimumIsRefusedNamingTheRfc) {
  const std::pair<std::string, std::string> cases[] = {
      {"udp_unreplied = 119", "timeouts.udp_unreplied: 119 s is below the 120 s that RFC 4787 REQ-5 requires for a UDP mapping"},
      {"udp_replied = 10", "timeouts.udp_replied: 10 s is below the 120 s that RFC 4787 REQ-5 requires for a UDP mapping"},
      {"tcp_established = 7439",
       "timeouts.tcp_established: 7439 s is below the 7440 s that RFC 5382 REQ-5 requires for an established TCP session"},
      {"tcp_syn_sent = 239", "timeouts.tcp_syn_sent: 239 s is below the 240 s that RFC 5382 REQ-5 requires for a transitory TCP session"},
      {"tcp_time_wait = 2", "timeouts.tcp_time_wait: 2 s is below the 240 s that RFC 5382 REQ-5 requires for a transitory TCP session"},
      {"icmp = 59", "timeouts.icmp: 59 s is below the 60 s that RFC 5508 REQ-1 requires for an ICMP query mapping"},
  };
  for (const auto& [line, expected] : cases) {
    EXPECT_EQ(nat_refusal(std::string(kNatHead) + "[timeouts]\n" + line + "\n"),
              "nat.toml:5: " + expected + "; `below_rfc_minimums = true` in [nat] allows it (tests, labs)");
  }
}

TEST(NatRfcMinimums, TheMinimumsThemselvesAndOtherAreTaken) {
  const NatConfig c = load_nat_config(ConfigText{
      "nat.toml", std::string(kNatHead) + "[timeouts]\nudp_unreplied = 120\nudp_replied = 120\ntcp_established = 7440\n"
                                          "tcp_fin_wait = 240\nicmp = 60\nother = 1\n"});
  EXPECT_EQ(c.timeouts.udp_unreplied, 120 * kNanosPerSecond);
  EXPECT_EQ(c.timeouts.tcp_timeout(TcpState::established), 7440 * kNanosPerSecond);
  EXPECT_EQ(c.timeouts.icmp, 60 * kNanosPerSecond);
  EXPECT_EQ(c.timeouts.other, kNanosPerSecond);  // no RFC bounds it
  EXPECT_FALSE(nat_timeout_below_rfc_minimum(nat_timeouts()));
  EXPECT_EQ(nat_timeout_below_rfc_minimum(ConntrackTimeouts{})->key, "udp_unreplied");  // Linux conntrack's 30 s
}

TEST(NatRfcMinimums, BelowThemOnlyWhenTheConfigurationSaysSo) {
  const std::string short_timeouts = "[timeouts]\nudp_unreplied = 2\nudp_replied = 2\ntcp_established = 10\ntcp_close = 2\nicmp = 2\n";
  const NatConfig c = load_nat_config(ConfigText{"nat.toml", std::string(kNatHead) + "below_rfc_minimums = true\n" + short_timeouts});
  EXPECT_EQ(c.timeouts.udp_unreplied, 2 * kNanosPerSecond);
  EXPECT_EQ(c.timeouts.tcp_timeout(TcpState::established), 10 * kNanosPerSecond);
  EXPECT_EQ(c.timeouts.icmp, 2 * kNanosPerSecond);
  EXPECT_NE(nat_refusal(std::string(kNatHead) + "below_rfc_minimums = false\n" + short_timeouts).find("RFC 4787 REQ-5"),
            std::string::npos);
  EXPECT_EQ(nat_refusal(std::string(kNatHead) + "below_rfc_minimums = \"yes\"\n"),
            "nat.toml:4: nat.below_rfc_minimums: expected true or false");
}

}  // namespace
}  // namespace flowtrack
