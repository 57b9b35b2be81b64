// The stateful balancer's state carried over to a fresh instance (snapshot, restore): the pool as
// changed since the start (a drain), every connection still on its backend, and a snapshot that does
// not fit the configuration refused by name.
#include <gtest/gtest.h>

#include <map>

#include "lb_rig.hpp"

namespace flowtrack {
namespace {

using namespace lb_rig;

constexpr Nanos kLbSecond = kNanosPerSecond;

// 30 connections over the three backends, then web-1 drained.
Lb busy_balancer() {
  Lb lb = make_lb();
  for (std::uint16_t port = 1000; port < 1030; ++port) run(lb, client_key(port), tcpflag::kSyn, kLbSecond);
  lb.apply(web_change(PoolAction::drain, "web-1"));
  return lb;
}

TEST(StatefulLbSnapshot, ARestoredBalancerHoldsTheSamePoolAndConnections) {
  const Lb before = busy_balancer();
  const LbSnapshot saved = before.snapshot(5 * kLbSecond);
  EXPECT_EQ(saved.connections.size(), 30u);
  EXPECT_EQ(saved.services[0].backends[1].weight, 0u) << "the drain is part of the state";
  Lb after = make_lb();
  after.restore(saved, 100 * kLbSecond);
  EXPECT_EQ(after.snapshot(100 * kLbSecond), saved);
  for (std::size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(after.services()[0].backends()[b].connections, before.services()[0].backends()[b].connections);
  }
}

TEST(StatefulLbSnapshot, ConnectionsStayOnTheirBackendsAndNewOnesAvoidTheDrainedOne) {
  const Lb before = busy_balancer();
  std::map<std::uint16_t, std::uint32_t> backend_of;  // client port -> backend address
  Lb probe = busy_balancer();
  for (std::uint16_t port = 1000; port < 1030; ++port) backend_of[port] = run(probe, client_key(port), tcpflag::kAck, 2 * kLbSecond).key.dst_addr;
  Lb after = make_lb();
  after.restore(before.snapshot(2 * kLbSecond), 0);
  for (std::uint16_t port = 1000; port < 1030; ++port) {
    const Output o = run(after, client_key(port), tcpflag::kAck, kLbSecond);
    EXPECT_EQ(o.verdict, Verdict::forward);
    EXPECT_EQ(o.key.dst_addr, backend_of[port]) << "client port " << port;
  }
  const std::uint32_t drained = after.services()[0].backends()[1].config.address;
  for (std::uint16_t port = 2000; port < 2030; ++port) EXPECT_NE(run(after, client_key(port), tcpflag::kSyn, kLbSecond).key.dst_addr, drained);
  EXPECT_EQ(after.counters().drops[static_cast<std::size_t>(NfDrop::non_syn_first)], 0u);
}

// A client's TCP packet through `lb`, in a buffer with room for a tunnel's headers.
Verdict sent_with_room(Lb& lb, const FlowKeyV4& key, std::uint8_t flags, Nanos now) {
  std::vector<std::uint8_t> frame = build_frame(FrameSpec::tcp4(key, flags));
  const std::size_t size = frame.size();
  frame.resize(size + 64);
  NfPacket packet{std::span(frame).first(size), {}, static_cast<std::uint32_t>(size), frame.size()};
  EXPECT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  return process_packet(lb, packet, now);
}

TEST(StatefulLbSnapshot, TunnelledConnectionsAndADownBackendCarryOver) {
  StatefulLbConfig c = lb_config();
  c.services[0].tunnel.mode = ForwardMode::ipip;
  c.services[0].tunnel.source = to_network32(0x0a010064);
  Lb before(c);
  for (std::uint16_t port = 1000; port < 1010; ++port) EXPECT_NE(sent_with_room(before, client_key(port), tcpflag::kSyn, kLbSecond), Verdict::drop);
  before.apply(web_change(PoolAction::down, "web-2"));
  const LbSnapshot saved = before.snapshot(2 * kLbSecond);
  ASSERT_EQ(saved.connections.size(), 10u);
  for (const LbSnapshot::Connection& saved_connection : saved.connections) EXPECT_TRUE(saved_connection.connection.one_way);
  EXPECT_TRUE(saved.services[0].backends[2].down);
  Lb after(c);
  after.restore(saved, 0);
  EXPECT_EQ(after.snapshot(0), saved);
  for (std::uint16_t port = 1000; port < 1010; ++port) EXPECT_NE(sent_with_room(after, client_key(port), tcpflag::kAck, kLbSecond), Verdict::drop);
  EXPECT_EQ(after.counters().connections_created, 0u) << "every packet found its restored connection";
  EXPECT_EQ(after.tracker().size(), 10u);
}

TEST(StatefulLbSnapshot, ASnapshotThatDoesNotFitIsRefusedByName) {
  const LbSnapshot good = busy_balancer().snapshot(kLbSecond);
  const auto refused = [](const LbSnapshot& s, const std::string& reason) {
    Lb lb = make_lb();
    try {
      lb.restore(s, 0);
      ADD_FAILURE() << "restored: " << reason;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  LbSnapshot s = good;
  s.services[0].name = "mail";
  refused(s, "not this configuration's service");
  s = good;
  s.services.push_back(s.services[0]);
  refused(s, "another set of services");
  s = good;
  s.connections[0].backend = 7;
  refused(s, "names no backend");
  s = good;
  s.connections[0].backend = (s.connections[0].backend + 1) % 3;
  refused(s, "does not go to the backend it names");
  s = good;
  s.connections.push_back(s.connections[0]);
  refused(s, "tuple twice");
  s = good;
  s.services[0].backends.push_back(s.services[0].backends[0]);
  refused(s, "web-0 twice");
  Lb used = busy_balancer();
  EXPECT_THROW(used.restore(good, 0), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
