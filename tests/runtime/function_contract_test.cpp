// The network-function contract (nf/network_function.hpp), held by one suite over every function, as
// the table conformance suite holds every table to FlowTable: on a whole campus trace run through the
// burst loop each packet is counted exactly once, under the verdict it got; whatever is forwarded or
// answered still parses; the output does not depend on the burst size; and once time has moved past
// every timeout, every connection a function opened has ended.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/verdict_log.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace flowtrack {
namespace {

using Lb = StatefulLb<CuckooTable<FlowKeyV4>>;
using Nat = Nat44<CuckooTable<FlowKeyV4>>;
constexpr std::size_t kBurstSize = 32;

// Concury with its control plane on a thread of its own: the same type, another constructor argument.
struct ConcuryOwnThread : ConcuryLb {
  explicit ConcuryOwnThread(const StatefulLbConfig& config) : ConcuryLb(config, ControlPlanePlace::own_thread) {}
};

static_assert(NetworkFunction<Forwarder> && NetworkFunction<StatelessLb> && NetworkFunction<Lb> && NetworkFunction<Nat> &&
              NetworkFunction<ConcuryLb> && NetworkFunction<ConcuryOwnThread>);

// Each function built from the example configuration written for the campus trace.
template <class Nf>
Nf make_function() {
  if constexpr (std::is_same_v<Nf, Forwarder>) {
    return Forwarder{};
  } else if constexpr (std::is_same_v<Nf, StatelessLb>) {
    return StatelessLb(load_stateless_lb_config(FLOWTRACK_SOURCE_DIR "/examples/slb.toml"));
  } else if constexpr (std::is_same_v<Nf, Lb>) {
    return Lb(load_stateful_lb_config(FLOWTRACK_SOURCE_DIR "/examples/lb.toml"));
  } else if constexpr (std::is_same_v<Nf, ConcuryLb> || std::is_same_v<Nf, ConcuryOwnThread>) {
    return Nf(load_stateful_lb_config(FLOWTRACK_SOURCE_DIR "/examples/lb.toml"));
  } else {
    return Nat(load_nat_config(FLOWTRACK_SOURCE_DIR "/examples/nat.toml"), 0, 1);
  }
}

const PacketStore& campus() {
  static const PacketStore trace = [] {
    CampusProfile profile;
    profile.flows = 2'000;
    return generate_campus(profile);
  }();
  return trace;
}

// What a function gave each packet of a burst loop run, checked as it comes: a forwarded or answered
// packet still parses, and every packet gets exactly one verdict.
struct CheckingOutput {
  LinkType link;
  std::array<std::uint64_t, 4> verdicts{};  // by Verdict
  std::uint64_t released = 0;
  std::vector<std::uint32_t> slots;  // of each verdict, in order

  void verdict(const NfPacket& p, Verdict v) {
    ++verdicts[static_cast<std::size_t>(v)];
    slots.push_back(p.slot);
    if (v == Verdict::forward || v == Verdict::reply) {
      ParsedPacket after;
      EXPECT_EQ(parse_frame(p.frame, link, after), ParseStatus::ok) << "slot " << p.slot;
    }
  }
  void held(std::span<const std::uint8_t>, std::uint32_t) { ++released; }
  void stage_done(NfStage) {}
  std::uint64_t of(Verdict v) const { return verdicts[static_cast<std::size_t>(v)]; }
};

// The campus trace through `nf` in bursts of `burst` (runtime/burst_loop.hpp); its output laid out.
template <class Nf>
PacketStore through_loop(Nf& nf, std::size_t burst) {
  const PacketStore& trace = campus();
  std::vector<std::uint32_t> all(trace.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  ReplaySource source(trace, all);
  StageClock clock(false);
  VerdictLog log(source);
  WorkerCounters counters;
  run_burst_loop(nf, source, log, burst, counters, clock);
  PacketStore out(trace.link_type());
  log.write_to(source, out);
  return out;
}

template <class Nf>
class FunctionContract : public ::testing::Test {};
using Functions = ::testing::Types<Forwarder, StatelessLb, Lb, Nat, ConcuryLb, ConcuryOwnThread>;
TYPED_TEST_SUITE(FunctionContract, Functions);

TYPED_TEST(FunctionContract, EveryPacketIsCountedOnceUnderItsVerdictAndWhatLeavesParses) {
  auto nf = make_function<TypeParam>();
  const PacketStore& trace = campus();
  std::vector<std::uint32_t> all(trace.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  ReplaySource source(trace, all);
  StageClock clock(false);
  CheckingOutput out{trace.link_type()};
  WorkerCounters counters;
  run_burst_loop(nf, source, out, kBurstSize, counters, clock);
  // Every packet once, in arrival order.
  ASSERT_EQ(out.slots.size(), trace.size());
  EXPECT_TRUE(std::ranges::is_sorted(out.slots));
  const NfCounters c = nf.counters();
  std::uint64_t drops = 0;
  for (const std::uint64_t d : c.drops) drops += d;
  EXPECT_EQ(out.of(Verdict::forward) + out.released, c.forwarded);
  EXPECT_EQ(c.forwarded, c.passed + c.rewritten);
  // An answered packet was refused (counted as its drop) and turned into the answer.
  EXPECT_EQ(out.of(Verdict::drop) + out.of(Verdict::reply), drops - c.drops[static_cast<std::size_t>(NfDrop::fragment_timeout)]);
}

// The contract's promise that a burst behaves as its packets one at a time: the output of a whole trace
// is the same, byte for byte, whatever the burst size (the loop expires at the same packets for any
// divisor of kExpireEvery).
TYPED_TEST(FunctionContract, OutputDoesNotDependOnTheBurstSize) {
  auto one_at_a_time = make_function<TypeParam>();
  const PacketStore expected = through_loop(one_at_a_time, 1);
  for (const std::size_t burst : {std::size_t{8}, kBurstSize}) {
    auto nf = make_function<TypeParam>();
    const PacketStore got = through_loop(nf, burst);
    ASSERT_EQ(got.size(), expected.size()) << "bursts of " << burst;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(std::ranges::equal(got[i].bytes, expected[i].bytes)) << "bursts of " << burst << ", packet " << i;
      ASSERT_EQ(got[i].wire_length, expected[i].wire_length);
    }
    const NfCounters a = nf.counters(), b = one_at_a_time.counters();
    EXPECT_EQ(a.forwarded, b.forwarded);
    EXPECT_EQ(a.connections_created, b.connections_created);
    EXPECT_EQ(a.connections_expired, b.connections_expired);
    EXPECT_EQ(a.drops, b.drops);
  }
}

TYPED_TEST(FunctionContract, PastEveryTimeoutEveryConnectionHasEnded) {
  auto nf = make_function<TypeParam>();
  const PacketStore& trace = campus();
  through_loop(nf, kBurstSize);
  const Nanos later = trace[trace.size() - 1].timestamp_ns + 30 * 24 * 3600 * kNanosPerSecond;  // a month
  while (nf.expire(later, kDefaultExpireBudget) != 0) {
  }
  const NfCounters c = nf.counters();
  EXPECT_EQ(c.connections_expired, c.connections_created);
}

}  // namespace
}  // namespace flowtrack
