#include <gtest/gtest.h>

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <map>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/io/trace_stats.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {
namespace {

bool same_trace(const PacketStore& a, const PacketStore& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].timestamp_ns != b[i].timestamp_ns || a[i].wire_length != b[i].wire_length ||
        !std::equal(a[i].bytes.begin(), a[i].bytes.end(), b[i].bytes.begin(), b[i].bytes.end())) {
      return false;
    }
  }
  return true;
}

CampusProfile small_campus(std::uint64_t seed = 1) {
  CampusProfile profile;
  profile.flows = 3000;
  profile.seed = seed;
  return profile;
}

TEST(Synthetic, DeterministicPerSeed) {
  EXPECT_TRUE(same_trace(generate_campus(small_campus(3)), generate_campus(small_campus(3))));
  EXPECT_FALSE(same_trace(generate_campus(small_campus(3)), generate_campus(small_campus(4))));
  UniformProfile uniform{.flows = 100, .packets = 1000, .seed = 9};
  EXPECT_TRUE(same_trace(generate_uniform(uniform), generate_uniform(uniform)));
}

// A trace's every byte, timestamp and length, folded into one CRC32C.
std::uint32_t digest(const PacketStore& trace) {
  std::uint32_t crc = ~0u;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    crc = crc32c_update(crc, trace[i].bytes);
    crc = crc32c_u64(crc, trace[i].timestamp_ns);
    crc = crc32c_u64(crc, trace[i].wire_length);
  }
  return ~crc;
}

// A seed names one trace, whichever compiler built the generator: the release tree (GCC) and the ASan
// tree (clang) both check these digests, taken when random draws passed as one call's arguments (whose
// order each compiler picks) were made one a statement.
TEST(Synthetic, ASeedGivesTheSameTraceWhateverTheCompiler) {
  const UniformProfile uniform{.flows = 500, .packets = 5000, .seed = 3};
  EXPECT_EQ(digest(generate_uniform(uniform)), 3449686528u);
  EXPECT_EQ(digest(generate_zipf({uniform, 1.1})), 3139886294u);
  EXPECT_EQ(digest(generate_campus(small_campus(3))), 3778310261u);
}

TEST(Synthetic, ExactFlowCounts) {
  EXPECT_EQ(compute_trace_stats(generate_campus(small_campus())).flows, 3000u);
  UniformProfile uniform{.flows = 5000, .packets = 20000};
  EXPECT_EQ(compute_trace_stats(generate_uniform(uniform)).flows, 5000u);
  EXPECT_EQ(compute_trace_stats(generate_zipf({uniform, 1.2})).flows, 5000u);
}

TEST(Synthetic, CampusTimeOrderedAndTcpWellFormed) {
  const PacketStore trace = generate_campus(small_campus());
  // For each TCP connection: the first packet is the client's SYN, and once a FIN or RST was seen, only
  // the closing ACK/FIN packets follow; timestamps never go back.
  struct State {
    bool seen = false;
    bool closing = false;
    int packets_after_close = 0;
  };
  absl::flat_hash_map<FlowKeyV4, State, FlowKeyHasher> connections;
  std::uint64_t previous = 0;
  std::size_t syn_first = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ASSERT_GE(trace[i].timestamp_ns, previous);
    previous = trace[i].timestamp_ns;
    ParsedPacket packet;
    ASSERT_EQ(parse_frame(trace[i].bytes, trace.link_type(), packet), ParseStatus::ok);
    if (packet.key4.protocol != ipproto::kTcp) continue;
    const bool from_client = to_host16(packet.key4.dst_port) == 80 || to_host16(packet.key4.dst_port) == 443;
    State& state = connections[from_client ? packet.key4 : packet.key4.reversed()];
    if (!state.seen) {
      ASSERT_TRUE(from_client);
      ASSERT_EQ(packet.tcp_flags, tcpflag::kSyn);
      state.seen = true;
      ++syn_first;
    }
    if (state.closing) {
      ++state.packets_after_close;
      EXPECT_EQ(packet.payload_offset == packet.l3_end || packet.captured_truncated, true);
      EXPECT_LE(state.packets_after_close, 2);
    }
    if (packet.tcp_flags & (tcpflag::kFin | tcpflag::kRst)) state.closing = true;
  }
  EXPECT_GT(syn_first, 2000u);  // ~80% of 3000 connections are TCP
  for (const auto& [key, state] : connections) EXPECT_TRUE(state.closing) << key.to_string();
}

TEST(Synthetic, CampusAddressesFollowTheProfile) {
  const PacketStore trace = generate_campus(small_campus());
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ParsedPacket packet;
    ASSERT_EQ(parse_frame(trace[i].bytes, trace.link_type(), packet), ParseStatus::ok);
    const std::uint32_t src = to_host32(packet.key4.src_addr);
    const std::uint32_t dst = to_host32(packet.key4.dst_addr);
    const std::uint32_t client = (src >> 16) == 0x0a00 ? src : dst;
    const std::uint32_t server = client == src ? dst : src;
    EXPECT_EQ(client >> 16, 0x0a00u);
    EXPECT_GE(server, 0xc6120001u);
    EXPECT_LE(server, 0xc6120004u);
    EXPECT_LE(trace[i].bytes.size(), 128u);
  }
}

TEST(Synthetic, ZipfRankFrequencyFollowsThePowerLaw) {
  ZipfProfile profile{{.flows = 1000, .packets = 400'000, .seed = 5}, 1.0};
  const PacketStore trace = generate_zipf(profile);
  const TraceStats stats = compute_trace_stats(trace, 10);
  // With s = 1 the top flow gets ~1/H(1000) = 13% of the packets and the 10th ~1/10 of that; bounds are
  // loose (sampling noise is well under 1%).
  const double top = static_cast<double>(stats.top_flows[0].packets) / profile.base.packets;
  EXPECT_NEAR(top, 0.1336, 0.01);
  const double ratio = static_cast<double>(stats.top_flows[0].packets) / stats.top_flows[9].packets;
  EXPECT_NEAR(ratio, 10.0, 1.5);
}

TEST(Synthetic, BadProfilesAreRejected) {
  CampusProfile campus = small_campus();
  campus.flows = 0;
  EXPECT_THROW(generate_campus(campus), std::invalid_argument);
  campus = small_campus();
  campus.tcp_share = 0.9;
  campus.udp_share = 0.2;
  EXPECT_THROW(generate_campus(campus), std::invalid_argument);
  EXPECT_THROW(generate_uniform({.flows = 10, .packets = 5}), std::invalid_argument);
  EXPECT_THROW(generate_zipf({{.flows = 10, .packets = 50}, 0.0}), std::invalid_argument);
}

TEST(TraceMultiplier, CopiesAreDistinctAndKeepSpacing) {
  const PacketStore trace = generate_campus(small_campus());
  const PacketStore tripled = multiply_trace(trace, {.windows = 3});
  ASSERT_EQ(tripled.size(), 3 * trace.size());
  const TraceStats stats = compute_trace_stats(tripled);
  // A connection that straddles a window's rotation point is split in two pieces of the same 5-tuple
  // within a copy, which still counts once; so the count is exactly 3x.
  EXPECT_EQ(stats.flows, 3 * 3000u);
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < tripled.size(); ++i) {
    ASSERT_GE(tripled[i].timestamp_ns, previous);
    previous = tripled[i].timestamp_ns;
  }
  EXPECT_LE(tripled.duration_ns(), trace.duration_ns());

  // The copy at offset D/3: its packets are the original's from D/3 on, spaced as in the original.
  std::map<std::uint64_t, std::size_t> copy1;  // timestamp -> packet, for packets with 10.1.x.x clients
  for (std::size_t i = 0; i < tripled.size(); ++i) {
    ParsedPacket packet;
    ASSERT_EQ(parse_frame(tripled[i].bytes, tripled.link_type(), packet), ParseStatus::ok);
    const std::uint32_t src = to_host32(packet.key4.src_addr);
    const std::uint32_t dst = to_host32(packet.key4.dst_addr);
    if ((src >> 16) == 0x0a01 || (dst >> 16) == 0x0a01) copy1.emplace(tripled[i].timestamp_ns, i);
    EXPECT_FALSE((src >> 16) == 0x0a03 || (dst >> 16) == 0x0a03);
  }
  ASSERT_EQ(copy1.size(), trace.size());
  const std::uint64_t origin = trace.records().front().timestamp_ns;
  const std::uint64_t offset = (trace.duration_ns() + 1) / 3;
  std::vector<std::uint64_t> expected;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const std::uint64_t t = trace[i].timestamp_ns - origin;
    if (t >= offset) expected.push_back(t - offset);
  }
  auto it = copy1.begin();
  for (std::size_t k = 0; k < expected.size(); ++k, ++it) ASSERT_EQ(it->first, expected[k]);
}

TEST(TraceMultiplier, RejectsMoreWindowsThanTheClientNetworkHolds) {
  const PacketStore trace = generate_campus(small_campus());
  EXPECT_THROW(multiply_trace(trace, {.windows = 257}), std::invalid_argument);
  EXPECT_THROW(multiply_trace(trace, {.windows = 0}), std::invalid_argument);
}

TEST(TraceStats, KnownTinyTrace) {
  PacketStore store;
  const auto a = FlowKeyV4::from_host(0x0a000001, 0xc6120001, 1000, 80, ipproto::kTcp);
  const auto b = FlowKeyV4::from_host(0x0a000002, 0xc6120001, 2000, 53, ipproto::kUdp);
  auto add = [&](const FlowKeyV4& key, std::uint64_t t) {
    const auto frame = build_frame(key.protocol == ipproto::kTcp ? FrameSpec::tcp4(key, tcpflag::kAck) : FrameSpec::udp4(key));
    store.append(frame, t, static_cast<std::uint32_t>(frame.size()));
  };
  add(a, 0);
  add(a.reversed(), 10);
  add(b, 20);
  add(a, 30);  // a is alive 0..30, b at 20: two at once
  add(b.reversed(), 40);
  const std::vector<std::uint8_t> junk(10, 0);
  store.append(junk, 50, 10);
  const TraceStats stats = compute_trace_stats(store, 5, 3);
  EXPECT_EQ(stats.packets, 6u);
  EXPECT_EQ(stats.flows, 2u);
  EXPECT_EQ(stats.max_concurrent_flows, 2u);
  EXPECT_EQ(stats.packets_by_protocol.at("tcp"), 3u);
  EXPECT_EQ(stats.flows_by_protocol.at("udp"), 1u);
  EXPECT_EQ(stats.parse_failures.at("truncated_link"), 1u);
  ASSERT_EQ(stats.top_flows.size(), 2u);
  EXPECT_EQ(stats.top_flows[0].key, a.to_string());
  EXPECT_EQ(stats.top_flows[0].packets, 3u);
  ASSERT_EQ(stats.concurrency.size(), 3u);
  EXPECT_EQ(stats.concurrency[1].flows, 2u);  // t = 25 ns
}

}  // namespace
}  // namespace flowtrack
