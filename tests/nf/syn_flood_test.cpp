// SYN-flood resistance of the stateful LB (nf/new_connection_limiter.hpp), on the packets' own clock: the
// meter admits first packets at its rate with its burst, and a flood keeps it shut for as long as it
// lasts; under a flood of SYNs from spoofed sources the tracker keeps only what it held plus one burst,
// every legitimate connection's packets still reach one backend (the consistent choice) and get their
// state once the flood is over; and a full tracker never costs an established connection its state.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/util/random.hpp"
#include "lb_rig.hpp"

namespace flowtrack {
namespace syn_flood_test {

using namespace lb_rig;
constexpr Nanos kMs = kNanosPerMilli;

TEST(NewConnectionLimiter, AdmitsItsRateAndItsBurstAndNothingDuringAFlood) {
  NewConnectionLimiter meter(1000, 10);  // one a millisecond, ten at once
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(meter.admit(0)) << i;
  EXPECT_FALSE(meter.admit(0));
  // A flood of a hundred a millisecond for a second: the refused take their tokens too, none is admitted.
  std::size_t admitted = 0;
  Nanos t = 0;
  for (int i = 0; i < 100'000; ++i) admitted += meter.admit(t += 10 * kNanosPerMicro);
  EXPECT_EQ(admitted, 0u);
  // Once it ends, the bucket fills again from burst below empty, burst / rate = 10 ms, a refused
  // packet taking its token too: 9 ms after, refused (2 ms short); 3 ms after that, admitted.
  EXPECT_FALSE(meter.admit(t += 9 * kMs));
  EXPECT_TRUE(meter.admit(t += 3 * kMs));
  // At its rate, every one is admitted, for as long as it goes.
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(meter.admit(t += kMs)) << i;
}

TEST(NewConnectionLimiter, NoRateNoLimit) {
  NewConnectionLimiter none;
  EXPECT_FALSE(none.limits());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(none.admit(0));
}

// The rig's web service behind a balancer with a limit of 1000 new connections a second, bursts of 20.
StatefulLbConfig limited(std::size_t max_connections = 100'000) {
  StatefulLbConfig config = lb_config(LbPolicy::round_robin, max_connections);
  config.new_connection_rate = 1000;
  config.new_connection_burst = 20;
  return config;
}

// A connection's handshake (the backend's SYN+ACK given the VIP back) and a data packet; the backend
// address each of the client's packets left for.
std::vector<std::uint32_t> connect(Lb& lb, const FlowKeyV4& key, Nanos now) {
  using namespace tcpflag;
  std::vector<std::uint32_t> to;
  for (const std::uint8_t flags : {kSyn, kAck, std::uint8_t(kAck | kPsh)}) {
    const Output out = run(lb, key, flags, now, flags == kSyn ? 0 : 100);
    EXPECT_EQ(out.verdict, Verdict::forward);
    to.push_back(out.key.dst_addr);
    if (flags == kSyn) {
      EXPECT_EQ(run(lb, out.key.reversed(), kSyn | kAck, now).key, key.reversed());
    }
  }
  return to;
}

TEST(SynFlood, SpoofedSynsCannotFillTheTrackerAndLegitimateConnectionsGoOn) {
  Lb lb(limited());
  // 100 connections before the flood, within the rate (one every 2 ms).
  std::vector<FlowKeyV4> established;
  std::map<std::uint16_t, std::uint32_t> backend_of;
  Nanos t = 0;
  for (std::uint16_t port = 1; port <= 100; ++port) {
    established.push_back(client_key(port));
    backend_of[port] = connect(lb, established.back(), t += 2 * kMs).back();
  }
  ASSERT_EQ(lb.tracker().size(), 100u);
  ASSERT_EQ(lb.stats().over_rate, 0u);

  // 200 000 SYNs from random sources at 1 M a second, and 100 legitimate connections among them.
  Random rng(7);
  std::size_t legitimate_failures = 0;
  for (int i = 0; i < 200'000; ++i) {
    t += kNanosPerMicro;
    const FlowKeyV4 spoofed = FlowKeyV4::from_host(static_cast<std::uint32_t>(rng.next()), lb_rig::kVip,
                                                   static_cast<std::uint16_t>(1024 + rng.below(60000)), 443, ipproto::kTcp);
    ASSERT_EQ(run(lb, spoofed, tcpflag::kSyn, t).verdict, Verdict::forward);
    if (i % 2000 == 1000) {
      const FlowKeyV4 key = client_key(static_cast<std::uint16_t>(20000 + i / 2000));
      const std::vector<std::uint32_t> to = connect(lb, key, t);
      const Service& svc = lb.services()[0];
      const std::uint32_t consistent = svc.backends()[svc.consistent_choice(flow_hash(key))].config.address;
      for (const std::uint32_t b : to) legitimate_failures += b != consistent;
    }
    // The connections from before the flood keep their state and their backends.
    if (i % 20000 == 0) {
      for (std::uint16_t port = 1; port <= 100; ++port) {
        legitimate_failures += run(lb, established[port - 1], tcpflag::kAck, t, 10).key.dst_addr != backend_of[port];
      }
    }
  }
  EXPECT_EQ(legitimate_failures, 0u);
  // The tracker holds what it held and one burst taken at the flood's start, nothing more.
  EXPECT_LE(lb.tracker().size(), 100u + 20u);
  EXPECT_GE(lb.stats().over_rate, 200'000u - 20u);
  EXPECT_EQ(lb.counters().connections_created, lb.tracker().size());

  // After the flood, a legitimate connection met during it gets its state from its next packet, on
  // the backend it had (the consistent choice, as a first packet without SYN takes).
  t += kNanosPerSecond;
  const FlowKeyV4 met = client_key(20000 + 50);
  const Service& svc = lb.services()[0];
  const std::uint32_t consistent = svc.backends()[svc.consistent_choice(flow_hash(met))].config.address;
  EXPECT_EQ(run(lb, met, tcpflag::kAck, t, 10).key.dst_addr, consistent);
  EXPECT_TRUE(lb.tracker().find(met, flow_hash(met)));
}

TEST(SynFlood, AFullTrackerNeverCostsAnEstablishedConnectionItsState) {
  for (const bool stateless_when_full : {false, true}) {
    StatefulLbConfig config = lb_config(LbPolicy::round_robin, 50);
    config.stateless_when_full = stateless_when_full;
    Lb lb(config);
    std::map<std::uint16_t, std::uint32_t> backend_of;
    for (std::uint16_t port = 1; port <= 50; ++port) backend_of[port] = connect(lb, client_key(port), 0).back();
    ASSERT_EQ(lb.tracker().size(), 50u);
    Random rng(3);
    for (int i = 0; i < 10'000; ++i) {
      const FlowKeyV4 spoofed = FlowKeyV4::from_host(static_cast<std::uint32_t>(rng.next()), lb_rig::kVip, 40000, 443, ipproto::kTcp);
      run(lb, spoofed, tcpflag::kSyn, kMs);
    }
    EXPECT_EQ(lb.counters().drops[static_cast<std::size_t>(NfDrop::table_full)], stateless_when_full ? 0u : 10'000u);
    for (std::uint16_t port = 1; port <= 50; ++port) {
      const FlowKeyV4 key = client_key(port);
      EXPECT_TRUE(lb.tracker().find(key, flow_hash(key))) << port;
      EXPECT_EQ(run(lb, key, tcpflag::kAck, 2 * kMs, 10).key.dst_addr, backend_of[port]) << port;
    }
  }
}

}  // namespace syn_flood_test
}  // namespace flowtrack
