// The health checks' way into a tunnel-mode service (runtime/probe_tunnel.hpp), without a device: a
// probe connection's packet, as the kernel routes it into the probe tunnel, is put in the tunnel of the
// backend its local port was routed to, from its own source, and comes out of it at the backend
// (ipip_inner, gue_inner: what flowtrack-decap does) byte for byte, addressed to the VIP; GUE's source
// port is constant for the connection; a packet of no probe (another port, not TCP) is not sent.
#include <gtest/gtest.h>

#include <vector>

#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/runtime/probe_tunnel.hpp"

namespace flowtrack {
namespace probe_tunnel_test {

constexpr std::uint32_t kChecker = 0x0a0a02fa, kVip = 0x0a0a0164, kBackend = 0x0a0a020c;
constexpr std::uint16_t kProbePort = 41000;

// The IPv4 packet of a probe's frame (what a TUN device gives: no link header).
std::vector<std::uint8_t> probe_packet(std::uint16_t port, std::uint8_t protocol = ipproto::kTcp, std::uint16_t payload = 0) {
  const FlowKeyV4 key = FlowKeyV4::from_host(kChecker, kVip, port, 80, protocol);
  const std::vector<std::uint8_t> frame =
      build_frame(protocol == ipproto::kTcp ? FrameSpec::tcp4(key, tcpflag::kSyn, payload) : FrameSpec::udp4(key, payload));
  return {frame.begin() + 14, frame.end()};
}

// What the probe tunnel sends for `inner`, read into a buffer after `headroom` free bytes (empty: nothing).
std::vector<std::uint8_t> wrapped(const ProbeRoutes& routes, const std::vector<std::uint8_t>& inner,
                                  std::size_t headroom = kMaxTunnelOverhead) {
  std::vector<std::uint8_t> buffer(headroom, 0xee);
  buffer.insert(buffer.end(), inner.begin(), inner.end());
  const std::span<const std::uint8_t> outer = routes.wrap(buffer, headroom);
  return {outer.begin(), outer.end()};
}

TunnelConfig tunnel(ForwardMode mode) {
  TunnelConfig t;
  t.mode = mode;
  t.source = to_network32(0x0a0a0201);  // the balancer's: not the probe's
  return t;
}

TEST(ProbeRoutes, AProbesPacketGoesInItsBackendsIpipTunnelFromItsOwnSource) {
  ProbeRoutes routes;
  routes.set(to_network16(kProbePort), to_network32(kBackend), tunnel(ForwardMode::ipip));
  const std::vector<std::uint8_t> inner = probe_packet(kProbePort, ipproto::kTcp, 30);
  const std::vector<std::uint8_t> out = wrapped(routes, inner);
  ASSERT_EQ(out.size(), inner.size() + 20);
  EXPECT_EQ(out[9], 4);  // IPIP
  EXPECT_EQ(load_raw<std::uint32_t>(out.data() + 12), to_network32(kChecker));
  EXPECT_EQ(load_raw<std::uint32_t>(out.data() + 16), to_network32(kBackend));
  // The backend takes out the packet the kernel sent, to the VIP.
  const std::span<const std::uint8_t> taken = ipip_inner(out);
  EXPECT_EQ(std::vector<std::uint8_t>(taken.begin(), taken.end()), inner);
  EXPECT_EQ(load_raw<std::uint32_t>(taken.data() + 16), to_network32(kVip));
}

TEST(ProbeRoutes, GueKeepsOneSourcePortForAConnectionAndGoesToTheTunnelsPort) {
  ProbeRoutes routes;
  routes.set(to_network16(kProbePort), to_network32(kBackend), tunnel(ForwardMode::gue));
  const std::vector<std::uint8_t> inner = probe_packet(kProbePort, ipproto::kTcp, 60);
  const std::vector<std::uint8_t> syn = wrapped(routes, probe_packet(kProbePort));
  ASSERT_EQ(syn.size(), probe_packet(kProbePort).size() + 28);
  const std::vector<std::uint8_t> request = wrapped(routes, inner, 64);  // more headroom than the headers take
  ASSERT_EQ(request.size(), inner.size() + 28);
  EXPECT_EQ(request[9], ipproto::kUdp);
  EXPECT_EQ(load_raw<std::uint16_t>(request.data() + 22), to_network16(kDefaultGuePort));
  EXPECT_EQ(load_raw<std::uint16_t>(request.data() + 20), load_raw<std::uint16_t>(syn.data() + 20));
  const std::span<const std::uint8_t> taken = gue_inner(std::span<const std::uint8_t>(request).subspan(28));
  EXPECT_EQ(std::vector<std::uint8_t>(taken.begin(), taken.end()), inner);
}

TEST(ProbeRoutes, APortTakenByAnotherProbeFollowsItAndPacketsOfNoProbeAreNotSent) {
  ProbeRoutes routes;
  routes.set(to_network16(kProbePort), to_network32(kBackend), tunnel(ForwardMode::ipip));
  routes.set(to_network16(kProbePort), to_network32(kBackend + 1), tunnel(ForwardMode::ipip));
  const std::vector<std::uint8_t> out = wrapped(routes, probe_packet(kProbePort));
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(load_raw<std::uint32_t>(out.data() + 16), to_network32(kBackend + 1));
  EXPECT_TRUE(wrapped(routes, probe_packet(kProbePort + 1)).empty());  // a port no probe took
  EXPECT_TRUE(wrapped(routes, probe_packet(kProbePort, ipproto::kUdp, 8)).empty());  // not a probe's TCP
  std::vector<std::uint8_t> cut = probe_packet(kProbePort);
  cut.resize(cut.size() - 1);  // shorter than its header says
  EXPECT_TRUE(wrapped(routes, cut).empty());
  EXPECT_TRUE(wrapped(routes, probe_packet(kProbePort), 19).empty());  // no room for the headers
}

}  // namespace probe_tunnel_test
}  // namespace flowtrack
