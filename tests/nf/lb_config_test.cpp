// The load balancers' configuration keys of their operators' features: a service's forwarding mode and
// tunnel (read by both balancers' readers) and the new-connection limit, with their defaults and an
// error naming the key for each mistake.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "flowtrack/nf/nf_config.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace lb_config_test {

// One service with two backends; `service_keys` go into its table, `backend_keys` into its first backend's.
std::string lb_file(const std::string& service_keys, const std::string& backend_keys = "", const std::string& head = "") {
  return test::temp_config("lb.toml", head + "[[service]]\nname = \"web\"\nvip = \"198.18.0.1\"\nport = 443\n" + service_keys +
                                          "\n[[service.backend]]\nname = \"b1\"\naddress = \"10.10.2.11\"\n" + backend_keys +
                                          "\n[[service.backend]]\nname = \"b2\"\naddress = \"10.10.2.12\"\n");
}

// The ConfigError of the stateful LB's reader for that file, or "" when it loads.
std::string error_of(const std::string& path) {
  try {
    load_stateful_lb_config(path);
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

TEST(LbServiceConfig, AServiceForwardsInNatModeUnlessToldOtherwise) {
  const StatefulLbConfig c = load_stateful_lb_config(lb_file(""));
  EXPECT_EQ(c.services[0].tunnel.mode, ForwardMode::nat);
}

TEST(LbServiceConfig, TunnelKeysAreReadByBothBalancers) {
  const std::string path = lb_file("forward = \"gue\"\ntunnel_source = \"10.10.2.1\"\nmtu = 9000\ngue_port = 5555");
  for (const TunnelConfig& t : {load_stateful_lb_config(path).services[0].tunnel, load_stateless_lb_config(path).services[0].tunnel}) {
    EXPECT_EQ(t.mode, ForwardMode::gue);
    EXPECT_EQ(t.source, to_network32(0x0a0a0201));
    EXPECT_EQ(t.mtu, 9000);
    EXPECT_EQ(t.gue_port, to_network16(5555));
  }
  const TunnelConfig ipip = load_stateful_lb_config(lb_file("forward = \"ipip\"\ntunnel_source = \"10.10.2.1\"")).services[0].tunnel;
  EXPECT_EQ(ipip.mode, ForwardMode::ipip);
  EXPECT_EQ(ipip.mtu, kDefaultTunnelMtu);
}

TEST(LbServiceConfig, TunnelMistakesNameTheirKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"forward = \"gre\"", "service.forward"},
      {"forward = \"ipip\"", "service.tunnel_source"},                                   // a tunnel needs its source
      {"mtu = 9000", "service.mtu"},                                                      // NAT mode takes no MTU
      {"tunnel_source = \"10.10.2.1\"", "service.tunnel_source"},
      {"forward = \"ipip\"\ntunnel_source = \"10.10.2.1\"\ngue_port = 6080", "service.gue_port"},  // only GUE has a port
      {"forward = \"gue\"\ntunnel_source = \"10.10.2.1\"\nmtu = 100", "service.mtu"},
      {"forward = \"gue\"\ntunnel_source = \"nowhere\"", "service.tunnel_source"},
  };
  for (const auto& [keys, key] : cases) EXPECT_NE(error_of(lb_file(keys)).find(key), std::string::npos) << keys;
  // The tunnel delivers the client's packet as it is: a backend's port would never be used.
  EXPECT_NE(error_of(lb_file("forward = \"ipip\"\ntunnel_source = \"10.10.2.1\"", "port = 8080")).find("service.backend.port"),
            std::string::npos);
  const std::string added_with_port = lb_file("forward = \"ipip\"\ntunnel_source = \"10.10.2.1\"", "",
                                              "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"b3\"\naction = \"add\"\n"
                                              "address = \"10.10.2.13\"\nport = 80\n");
  EXPECT_NE(error_of(added_with_port).find("change.port"), std::string::npos) << error_of(added_with_port);
}

TEST(LbServiceConfig, TheNewConnectionLimitIsOffUnlessGivenAndItsBurstATenthOfItByDefault) {
  EXPECT_EQ(load_stateful_lb_config(lb_file("")).new_connection_rate, 0u);
  const StatefulLbConfig limited = load_stateful_lb_config(lb_file("", "", "[lb]\nnew_connection_rate = 125000\n"));
  EXPECT_EQ(limited.new_connection_rate, 125000u);
  EXPECT_EQ(limited.burst_or_default(), 12500u);
  EXPECT_EQ(load_stateful_lb_config(lb_file("", "", "[lb]\nnew_connection_rate = 5\nnew_connection_burst = 3\n")).burst_or_default(), 3u);
  EXPECT_NE(error_of(lb_file("", "", "[lb]\nnew_connection_burst = 3\n")).find("lb.new_connection_burst"), std::string::npos);
  EXPECT_NE(error_of(lb_file("", "", "[lb]\nnew_connection_rate = -1\n")).find("lb.new_connection_rate"), std::string::npos);
}

}  // namespace lb_config_test
}  // namespace flowtrack
