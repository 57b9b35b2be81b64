// What the load balancers' tests share: a service of a few backends, a stateful balancer over a cuckoo
// table, and one packet through it with every checksum of the frame that leaves checked by full
// recomputation (support/checksum_oracle.hpp).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack::lb_rig {

using Lb = StatefulLb<CuckooTable<FlowKeyV4>>;
inline constexpr std::uint32_t kClient = 0x0a000001;  // host order, as FlowKeyV4::from_host takes them
inline constexpr std::uint32_t kVip = 0xc6120001;

// Backend i is web-i at 10.1.0.(i+1), port 8443 (or `backend_port`; 0 keeps the client's port).
inline ServiceConfig web_service(std::size_t backends = 3, std::uint8_t protocol = ipproto::kTcp,
                                 std::uint16_t backend_port = 8443) {
  ServiceConfig s{"web", to_network32(kVip), to_network16(443), protocol, {}};
  for (std::size_t i = 0; i < backends; ++i) {
    s.backends.push_back({"web-" + std::to_string(i), to_network32(0x0a010000 + static_cast<std::uint32_t>(i) + 1),
                          to_network16(backend_port), 1});
  }
  return s;
}

inline StatefulLbConfig lb_config(LbPolicy policy = LbPolicy::round_robin, std::size_t max_connections = 1024) {
  StatefulLbConfig config;
  config.services = {web_service()};
  config.policy = policy;
  config.max_connections = max_connections;
  config.maglev_size = 251;
  return config;
}

inline Lb make_lb(LbPolicy policy = LbPolicy::round_robin, std::size_t max_connections = 1024) {
  return Lb(lb_config(policy, max_connections));
}

// A packet as it left the balancer.
struct Output {
  Verdict verdict;
  FlowKeyV4 key;
};

// Runs one frame through a balancer (the stateful LB, Concury) as if it came through a port of role
// `arrival` (unknown: replayed); the frame that leaves must parse and have every checksum right.
template <NetworkFunction Nf>
Output run_spec(Nf& lb, const FrameSpec& spec, Nanos now = 0, PortRole arrival = PortRole::unknown) {
  std::vector<std::uint8_t> frame = build_frame(spec);
  NfPacket packet{frame, {}, static_cast<std::uint32_t>(frame.size())};
  packet.arrival = arrival;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  const Verdict verdict = process_packet(lb, packet, now);
  ParsedPacket after;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
  EXPECT_TRUE(testing::ipv4_header_valid(frame, after));
  EXPECT_TRUE(testing::transport_valid(frame, after));
  return {verdict, after.key4};
}

template <NetworkFunction Nf>
Output run(Nf& lb, const FlowKeyV4& key, std::uint8_t flags, Nanos now = 0, std::uint16_t payload = 0,
           PortRole arrival = PortRole::unknown) {
  return run_spec(lb, FrameSpec::tcp4(key, flags, payload), now, arrival);
}

template <NetworkFunction Nf>
Output run_udp(Nf& lb, const FlowKeyV4& key, Nanos now = 0, std::uint16_t payload = 0) {
  return run_spec(lb, FrameSpec::udp4(key, payload), now);
}

// A change to service "web"'s backend `name` (a weight for PoolAction::weight).
inline PoolChange web_change(PoolAction action, const std::string& name, std::uint32_t weight = 0) {
  return {0, "web", action, {name, 0, 0, weight}};
}

// The backend of service 0 named `name`.
template <class Nf>
const Backend& web_backend(const Nf& lb, const std::string& name) {
  for (const Backend& b : lb.services()[0].backends()) {
    if (b.config.name == name) return b;
  }
  throw std::out_of_range("no backend " + name);
}

// A balancer shown its packets one at a time with a schedule of pool changes applied as their times
// come, as a replay applies it between bursts (runtime/scheduled_source.hpp): a NetworkFunction over
// the balancer, which the test keeps reading directly.
template <class Nf>
class Scheduled {
 public:
  Scheduled(Nf& nf, std::vector<PoolChange> changes, const StatefulLbConfig& config)
      : nf_(nf), schedule_(std::move(changes), config.services, config.maglev_size) {}

  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    apply_due_changes(schedule_, nf_, burst.front().time);
    nf_.process_burst(burst, out);
  }
  std::size_t expire(Nanos now, std::size_t budget) { return nf_.expire(now, budget); }
  NfCounters counters() const { return nf_.counters(); }

 private:
  Nf& nf_;
  PoolChangeSchedule schedule_;
};

inline FlowKeyV4 client_key(std::uint16_t client_port, std::uint8_t protocol = ipproto::kTcp) {
  return FlowKeyV4::from_host(kClient, kVip, client_port, 443, protocol);
}

}  // namespace flowtrack::lb_rig
