// A backend out of service (PoolAction::down, as a failed health check marks it): the stateful LB gives
// it no new connection, keeps its TCP connections on it, and moves its UDP flows to a backend in service
// with their next datagram; a drained backend (weight 0) keeps its UDP flows; `up` brings it back with
// its weight; Concury and the stateless LB stop sending it new flows; a change naming no backend of the
// pool is refused before anything applies.
#include <gtest/gtest.h>

#include <map>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "lb_rig.hpp"

namespace flowtrack {
namespace down_backend_test {

using namespace lb_rig;

PoolChange change(PoolAction action, const std::string& backend) { return {0, "web", action, {backend}}; }

// The backend (web-i: i) a packet left for.
std::size_t backend_of(const Output& out) { return to_network32(out.key.dst_addr) - 0x0a010001; }

TEST(DownBackend, ItsUdpFlowsMoveAndItsTcpConnectionsStay) {
  StatefulLbConfig config = lb_config(LbPolicy::round_robin);
  config.services = {web_service(3, ipproto::kUdp), web_service(3, ipproto::kTcp)};
  config.services[1].port = to_network16(80);
  Lb lb(config);
  // Three UDP flows and three TCP connections, one on each backend (round robin).
  std::map<int, FlowKeyV4> udp_on, tcp_on;
  for (std::uint16_t port = 1; port <= 3; ++port) {
    const FlowKeyV4 flow = client_key(port, ipproto::kUdp);
    udp_on[static_cast<int>(backend_of(run_udp(lb, flow)))] = flow;
    const FlowKeyV4 conn = FlowKeyV4::from_host(kClient, kVip, port, 80, ipproto::kTcp);
    tcp_on[static_cast<int>(backend_of(run(lb, conn, tcpflag::kSyn)))] = conn;
  }
  ASSERT_EQ(udp_on.size(), 3u);
  ASSERT_EQ(tcp_on.size(), 3u);
  lb.apply(change(PoolAction::down, "web-1"));

  // The UDP flow on web-1 moves with its next datagram, and stays where it moved; the others stay.
  const std::size_t moved = backend_of(run_udp(lb, udp_on[1], kNanosPerSecond));
  EXPECT_NE(moved, 1u);
  EXPECT_EQ(backend_of(run_udp(lb, udp_on[1], kNanosPerSecond)), moved);
  EXPECT_EQ(backend_of(run_udp(lb, udp_on[0], kNanosPerSecond)), 0u);
  EXPECT_EQ(backend_of(run_udp(lb, udp_on[2], kNanosPerSecond)), 2u);
  // TCP connections go on where they are; new ones avoid web-1.
  EXPECT_EQ(backend_of(run(lb, tcp_on[1], tcpflag::kAck, kNanosPerSecond, 10)), 1u);
  for (std::uint16_t port = 100; port < 130; ++port) {
    EXPECT_NE(backend_of(run(lb, FlowKeyV4::from_host(kClient, kVip, port, 80, ipproto::kTcp), tcpflag::kSyn)), 1u);
  }
  // The moved flow ended on web-1 and began anew elsewhere: both counted, web-1 holds its TCP one.
  EXPECT_EQ(lb.counters().connections_expired, 1u);
  EXPECT_EQ(lb.services()[0].backends()[1].connections, 0u);
  EXPECT_EQ(lb.services()[1].backends()[1].connections, 1u);

  // Up again, with the weight it had: it takes new connections.
  lb.apply(change(PoolAction::up, "web-1"));
  std::size_t to_web1 = 0;
  for (std::uint16_t port = 200; port < 230; ++port) {
    to_web1 += backend_of(run(lb, FlowKeyV4::from_host(kClient, kVip, port, 80, ipproto::kTcp), tcpflag::kSyn)) == 1;
  }
  EXPECT_EQ(to_web1, 10u);
}

TEST(DownBackend, ADrainedBackendKeepsItsUdpFlows) {
  StatefulLbConfig config = lb_config(LbPolicy::round_robin);
  config.services = {web_service(3, ipproto::kUdp)};
  Lb lb(config);
  const FlowKeyV4 flow = client_key(7, ipproto::kUdp);
  const std::size_t first = backend_of(run_udp(lb, flow));
  lb.apply(change(PoolAction::drain, "web-" + std::to_string(first)));
  EXPECT_EQ(backend_of(run_udp(lb, flow, kNanosPerSecond)), first);
}

TEST(DownBackend, TheOtherBalancersSendItNoNewFlow) {
  StatefulLbConfig config = lb_config();
  StatelessLb slb({config.services, StatelessSelection::maglev, 251});
  slb.apply(change(PoolAction::down, "web-2"));
  ConcuryLb concury(config);
  concury.apply(change(PoolAction::down, "web-2"));
  for (std::uint16_t port = 1; port <= 200; ++port) {
    EXPECT_NE(backend_of(run(concury, client_key(port), tcpflag::kSyn)), 2u);
    EXPECT_NE(backend_of(run(slb, client_key(port), tcpflag::kSyn)), 2u);
  }
}

TEST(DownBackend, AChangeNamingNoBackendOfThePoolIsRefused) {
  const std::vector<ServiceConfig> services = {web_service()};
  for (const PoolAction action : {PoolAction::down, PoolAction::up}) {
    const PoolChange changes[] = {change(action, "web-9")};
    const auto problem = check_pool_changes(changes, services, 251);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->key, "backend");
  }
  EXPECT_EQ(pool_action_from_name("down"), PoolAction::down);
  EXPECT_EQ(pool_action_from_name("up"), PoolAction::up);
}

}  // namespace down_backend_test
}  // namespace flowtrack
