// The network-function contract (nf/network_function.hpp), held by one suite over every function, as
// the table conformance suite holds every table to FlowTable: on a whole campus trace each packet is
// counted exactly once, under the verdict it got; whatever is forwarded or answered still parses; and
// once time has moved past every timeout, every connection a function opened has ended.
#include <gtest/gtest.h>

#include <array>

#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace flowtrack {
namespace {

using Lb = StatefulLb<CuckooTable<FlowKeyV4>>;
using Nat = Nat44<CuckooTable<FlowKeyV4>>;

static_assert(NetworkFunction<Forwarder> && NetworkFunction<StatelessLb> && NetworkFunction<Lb> && NetworkFunction<Nat>);
static_assert(HoldsPackets<Nat> && !HoldsPackets<Lb>);

// Each function built from the example configuration written for the campus trace.
template <class Nf>
Nf make_function() {
  if constexpr (std::is_same_v<Nf, Forwarder>) {
    return Forwarder{};
  } else if constexpr (std::is_same_v<Nf, StatelessLb>) {
    return StatelessLb(load_stateless_lb_config(FLOWTRACK_SOURCE_DIR "/examples/slb.toml"));
  } else if constexpr (std::is_same_v<Nf, Lb>) {
    return Lb(load_stateful_lb_config(FLOWTRACK_SOURCE_DIR "/examples/lb.toml"));
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

template <class Nf>
class FunctionContract : public ::testing::Test {};
using Functions = ::testing::Types<Forwarder, StatelessLb, Lb, Nat>;
TYPED_TEST_SUITE(FunctionContract, Functions);

TYPED_TEST(FunctionContract, EveryPacketIsCountedOnceUnderItsVerdictAndWhatLeavesParses) {
  auto nf = make_function<TypeParam>();
  const PacketStore& trace = campus();
  std::array<std::uint64_t, 4> verdicts{};  // by Verdict
  std::uint64_t released = 0;
  std::vector<std::uint8_t> frame;
  Nanos now = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const PacketView packet = trace[i];
    frame.assign(packet.bytes.begin(), packet.bytes.end());
    frame.resize(packet.bytes.size() + 128);  // room for an answer
    NfPacket p{std::span(frame).first(packet.bytes.size()), {}, packet.wire_length, frame.size()};
    ASSERT_EQ(parse_frame(p.frame, trace.link_type(), p.parsed), ParseStatus::ok);
    now = packet.timestamp_ns;
    const Verdict verdict = nf.process(p, now);
    ++verdicts[static_cast<std::size_t>(verdict)];
    if (verdict == Verdict::forward || verdict == Verdict::reply) {
      ParsedPacket after;
      EXPECT_EQ(parse_frame(p.frame, trace.link_type(), after), ParseStatus::ok) << "packet " << i;
    }
    if constexpr (HoldsPackets<TypeParam>) {
      nf.release([&](std::span<const std::uint8_t>, std::uint32_t) { ++released; });
    }
    if (i % 32 == 31) nf.expire(now, kDefaultExpireBudget);
  }
  const NfCounters c = nf.counters();
  std::uint64_t drops = 0;
  for (const std::uint64_t d : c.drops) drops += d;
  const auto of = [&](Verdict v) { return verdicts[static_cast<std::size_t>(v)]; };
  EXPECT_EQ(of(Verdict::forward) + released, c.forwarded);
  EXPECT_EQ(c.forwarded, c.passed + c.rewritten);
  // An answered packet was refused (counted as its drop) and turned into the answer.
  EXPECT_EQ(of(Verdict::drop) + of(Verdict::reply), drops - c.drops[static_cast<std::size_t>(NfDrop::fragment_timeout)]);
  EXPECT_EQ(of(Verdict::forward) + of(Verdict::drop) + of(Verdict::reply) + of(Verdict::held), trace.size());
}

TYPED_TEST(FunctionContract, PastEveryTimeoutEveryConnectionHasEnded) {
  auto nf = make_function<TypeParam>();
  const PacketStore& trace = campus();
  std::vector<std::uint8_t> frame;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    frame.assign(trace[i].bytes.begin(), trace[i].bytes.end());
    NfPacket p{frame, {}, trace[i].wire_length, frame.size()};
    ASSERT_EQ(parse_frame(p.frame, trace.link_type(), p.parsed), ParseStatus::ok);
    nf.process(p, trace[i].timestamp_ns);
  }
  const Nanos later = trace[trace.size() - 1].timestamp_ns + 30 * 24 * 3600 * kNanosPerSecond;  // a month
  while (nf.expire(later, kDefaultExpireBudget) != 0) {
  }
  const NfCounters c = nf.counters();
  EXPECT_EQ(c.connections_expired, c.connections_created);
}

}  // namespace
}  // namespace flowtrack
