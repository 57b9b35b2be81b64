// The NAT with its ports in blocks (block_size): what RFC 4787 and 6888 ask of the mapping still holds
// (endpoint-independent mapping, paired pooling, no port overloading), a subscriber's external ports lie
// in its blocks on its paired address, and the log holds one record per block given and taken back.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "nat_frames.hpp"

namespace flowtrack {
namespace {

using namespace nat_frames;

NatConfig block_config(std::uint16_t block_size, std::size_t pool = 1) {
  NatConfig c = config(NatFiltering::endpoint_independent, pool);
  c.block_size = block_size;
  c.max_sessions = c.max_mappings = 8192;
  return c;
}

FlowKeyV4 udp(std::uint32_t host, std::uint16_t sport, std::uint32_t remote = kRemote, std::uint16_t dport = 53) {
  return FlowKeyV4::from_host(kInside + host, remote, sport, dport, ipproto::kUdp);
}

TEST(Nat44Blocks, EndpointIndependentMappingHoldsWithBlocks) {
  Nat nat(block_config(64), 0, 1);
  const Out first = through(nat, FrameSpec::udp4(udp(1, 40000), 8));
  for (const auto& [remote, port] : {std::pair{kRemote, 5353}, std::pair{0x01010101u, 53}, std::pair{0x09090909u, 9999}}) {
    const Out o = through(nat, FrameSpec::udp4(udp(1, 40000, remote, static_cast<std::uint16_t>(port)), 8));
    EXPECT_EQ(o.key.src_addr, first.key.src_addr);
    EXPECT_EQ(o.key.src_port, first.key.src_port);
  }
  EXPECT_EQ(nat.mapping_count(), 1u);
}

TEST(Nat44Blocks, ASubscribersPortsLieInItsBlocksOnItsPairedAddress) {
  constexpr std::uint16_t kBlock = 32;
  Nat nat(block_config(kBlock, 4), 0, 1);
  PortBlockLog log(2 * nat.block_count());
  ASSERT_TRUE(nat.attach_block_log(&log));
  std::map<std::uint32_t, std::set<std::uint16_t>> blocks_of;  // inside address -> first ports of its blocks
  std::set<std::tuple<std::uint32_t, std::uint16_t, std::uint8_t>> external;  // address, port, protocol
  for (std::uint32_t host = 1; host <= 40; ++host) {
    std::uint32_t address = 0;
    for (std::uint16_t port = 2000; port < 2050; ++port) {  // 50 mappings each, TCP and UDP: two blocks or more
      const Out u = through(nat, FrameSpec::udp4(udp(host, port), 8));
      const Out t = tcp(nat, out_key(port, host), tcpflag::kSyn);
      for (const Out* o : {&u, &t}) {
        ASSERT_EQ(o->verdict, Verdict::forward);
        if (address == 0) address = o->key.src_addr;
        EXPECT_EQ(o->key.src_addr, address) << "paired pooling";
        const std::uint16_t p = to_host16(o->key.src_port);
        blocks_of[kInside + host].insert(static_cast<std::uint16_t>(1024 + (p - 1024) / kBlock * kBlock));
        EXPECT_TRUE(external.insert({o->key.src_addr, o->key.src_port, o->key.protocol}).second)
            << "an external endpoint handed out twice";
      }
    }
  }
  // The blocks the ports fell in are exactly the blocks the log says each subscriber was given.
  std::map<std::uint32_t, std::set<std::uint16_t>> logged;
  for (const PortBlockRecord& r : log.take_all()) {
    ASSERT_EQ(r.event, PortBlockRecord::Event::allocated);
    EXPECT_EQ(r.last_port, r.first_port + kBlock - 1);
    logged[to_host32(r.inside_addr)].insert(r.first_port);
  }
  EXPECT_EQ(logged, blocks_of);
  EXPECT_EQ(nat.blocks_held(), [&] {
    std::size_t n = 0;
    for (const auto& [host, firsts] : blocks_of) n += firsts.size();
    return n;
  }());
}

TEST(Nat44Blocks, NoPortOverloadingAndRepliesReachTheirHosts) {
  Nat nat(block_config(16), 0, 1);
  for (std::uint32_t host = 1; host <= 100; ++host) {
    const FlowKeyV4 key = udp(host, 5000, kRemote, 443);
    const Out o = through(nat, FrameSpec::udp4(key, 8));
    ASSERT_EQ(o.verdict, Verdict::forward);
    const Out back = through(nat, FrameSpec::udp4(o.key.reversed(), 8));
    EXPECT_EQ(back.key, key.reversed());
  }
}

TEST(Nat44Blocks, RecordsAreBlocksGivenPlusTakenBackNotSessions) {
  Nat nat(block_config(64), 0, 1);
  PortBlockLog log(2 * nat.block_count());
  ASSERT_TRUE(nat.attach_block_log(&log));
  std::size_t sessions = 0;
  for (std::uint32_t host = 1; host <= 20; ++host) {
    for (std::uint16_t port = 3000; port < 3030; ++port, ++sessions) {
      ASSERT_EQ(through(nat, FrameSpec::udp4(udp(host, port), 8), kNanosPerSecond).verdict, Verdict::forward);
    }
  }
  const std::size_t held = nat.blocks_held();
  EXPECT_EQ(held, 20u) << "30 mappings fit one block of 64";
  nat.expire(kNanosPerSecond + nat_timeouts().udp_unreplied + kNanosPerSecond);
  EXPECT_EQ(nat.mapping_count(), 0u);
  EXPECT_EQ(nat.blocks_held(), 0u);
  const std::vector<PortBlockRecord> records = log.take_all();
  EXPECT_EQ(records.size(), 2 * held);
  EXPECT_LT(records.size(), sessions / 10);
  std::map<std::pair<std::uint32_t, std::uint16_t>, int> open;  // (subscriber, block) -> allocated - released
  for (const PortBlockRecord& r : records) open[{r.inside_addr, r.first_port}] += r.event == PortBlockRecord::Event::allocated ? 1 : -1;
  for (const auto& [block, balance] : open) EXPECT_EQ(balance, 0);
}

TEST(Nat44Blocks, AFullLogRefusesNewBlocksAsCountedDropsAndHeldBlocksKeepServing) {
  NatConfig c = block_config(8);
  Nat nat(c, 0, 1);
  PortBlockLog log(4);  // room for two blocks held
  ASSERT_TRUE(nat.attach_block_log(&log));
  ASSERT_EQ(through(nat, FrameSpec::udp4(udp(1, 1000), 8)).verdict, Verdict::forward);
  ASSERT_EQ(through(nat, FrameSpec::udp4(udp(2, 1000), 8)).verdict, Verdict::forward);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp(3, 1000), 8)).verdict, Verdict::drop);
  EXPECT_EQ(drops(nat, NfDrop::log_full), 1u);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp(1, 1001), 8)).verdict, Verdict::forward) << "host 1's block has room";
  log.take_all();
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp(3, 1000), 8)).verdict, Verdict::forward) << "the reader caught up";
}

TEST(Nat44Blocks, ABlockLargerThanAWorkersSliceIsRefusedAtConstruction) {
  NatConfig c = block_config(40000);
  EXPECT_NO_THROW(Nat(c, 0, 1));
  EXPECT_THROW(Nat(c, 0, 2), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
