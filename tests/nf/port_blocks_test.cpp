// Port blocks: a subscriber's ports come from its own blocks, a block serves one subscriber for every
// protocol, blocks and ports wait their quarantines, and every block given or taken back is one record.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "flowtrack/nf/internal/port_blocks.hpp"

namespace flowtrack {
namespace {

constexpr Nanos kBlockQuarantine = 120 * kNanosPerSecond;
constexpr std::uint32_t kPublic = 0x0100a8c0;
constexpr std::uint32_t kAlice = 0x0100000a, kBob = 0x0200000a;
constexpr unsigned kTcp = 0, kUdp = 1, kIcmp = 2;

std::uint16_t allocate(PortBlocks& blocks, std::uint32_t subscriber, unsigned protocol, std::uint16_t preferred = 0,
                       Nanos now = 0, std::uint32_t holder = 1) {
  PortBlocks::Refusal refusal = PortBlocks::Refusal::none;
  const std::uint16_t port = blocks.allocate(subscriber, protocol, preferred, now, holder, refusal);
  EXPECT_EQ(port == 0, refusal != PortBlocks::Refusal::none);
  return port;
}

TEST(PortBlocks, ASubscribersPortsComeFromItsOwnBlockWhateverTheProtocol) {
  PortBlocks blocks(kPublic, 1024, 2047, 64, kBlockQuarantine, 1);  // 16 blocks
  EXPECT_EQ(blocks.block_count(), 16u);
  const std::uint16_t first = allocate(blocks, kAlice, kTcp);
  const std::uint16_t block_start = static_cast<std::uint16_t>(1024 + (first - 1024) / 64 * 64);
  for (unsigned protocol : {kTcp, kUdp, kIcmp}) {
    for (int i = 0; i < 20; ++i) {
      const std::uint16_t port = allocate(blocks, kAlice, protocol);
      EXPECT_GE(port, block_start);
      EXPECT_LT(port, block_start + 64);
    }
  }
  EXPECT_EQ(blocks.blocks_held(), 1u);
  const std::uint16_t bobs = allocate(blocks, kBob, kTcp);
  EXPECT_TRUE(bobs < block_start || bobs >= block_start + 64) << "Bob got a port of Alice's block";
  EXPECT_EQ(blocks.blocks_held(), 2u);
}

TEST(PortBlocks, APreferredPortIsKeptOnlyInsideTheSubscribersBlocks) {
  PortBlocks blocks(kPublic, 1024, 2047, 64, 0, 3);
  const std::uint16_t first = allocate(blocks, kAlice, kUdp);
  const std::uint16_t other_in_block = first == 1024 + (first - 1024) / 64 * 64 ? first + 1 : first - 1;
  EXPECT_EQ(allocate(blocks, kAlice, kUdp, other_in_block), other_in_block);
  EXPECT_EQ(allocate(blocks, kAlice, kTcp, first), first) << "the same port of another protocol is free";
  // A preferred port in no block of Alice's: another port of her block.
  const std::uint16_t elsewhere = static_cast<std::uint16_t>(first >= 1536 ? 1030 : 2040);
  const std::uint16_t got = allocate(blocks, kAlice, kUdp, elsewhere);
  EXPECT_NE(got, elsewhere);
  EXPECT_EQ((got - 1024) / 64, (first - 1024) / 64);
}

TEST(PortBlocks, AFullBlockOpensAnotherAndTheLastPortBackReleasesIt) {
  PortBlocks blocks(kPublic, 1, 100, 10, 0, 5);  // 10 blocks
  PortBlockLog log(64);
  blocks.attach_log(&log);
  std::vector<std::uint16_t> ports;
  for (int i = 0; i < 15; ++i) ports.push_back(allocate(blocks, kAlice, kTcp, 0, i));
  EXPECT_EQ(blocks.blocks_held(), 2u);
  std::vector<PortBlockRecord> records = log.take_all();
  ASSERT_EQ(records.size(), 2u);
  for (const PortBlockRecord& r : records) {
    EXPECT_EQ(r.event, PortBlockRecord::Event::allocated);
    EXPECT_EQ(r.inside_addr, kAlice);
    EXPECT_EQ(r.public_addr, kPublic);
    EXPECT_EQ(r.last_port - r.first_port, 9);
    EXPECT_EQ((r.first_port - 1) % 10, 0);
  }
  EXPECT_EQ(records[0].time, 0u);
  EXPECT_EQ(records[1].time, 10u) << "the 11th port opened the second block";
  // Every port of the first block back: it is released, one record.
  const std::uint16_t first_block = records[0].first_port;
  for (std::uint16_t p : ports) {
    if (p >= first_block && p < first_block + 10) blocks.release(kTcp, p, 100);
  }
  EXPECT_EQ(blocks.blocks_held(), 1u);
  records = log.take_all();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].event, PortBlockRecord::Event::released);
  EXPECT_EQ(records[0].first_port, first_block);
  EXPECT_EQ(records[0].time, 100u);
}

TEST(PortBlocks, ExhaustionRefusesAndNeverTakesAnotherSubscribersPort) {
  PortBlocks blocks(kPublic, 1, 40, 20, 0, 7);  // 2 blocks
  for (int i = 0; i < 20; ++i) ASSERT_NE(allocate(blocks, kAlice, kTcp), 0);
  for (int i = 0; i < 20; ++i) ASSERT_NE(allocate(blocks, kBob, kTcp), 0);
  PortBlocks::Refusal refusal = PortBlocks::Refusal::none;
  EXPECT_EQ(blocks.allocate(kAlice, kTcp, 0, 0, 1, refusal), 0);
  EXPECT_EQ(refusal, PortBlocks::Refusal::no_port);
  EXPECT_NE(allocate(blocks, kAlice, kUdp), 0) << "UDP ports of Alice's block are still free";
  EXPECT_EQ(blocks.allocate(0x0300000a, kUdp, 0, 0, 1, refusal), 0) << "a third subscriber finds no block";
}

TEST(PortBlocks, AReleasedBlockWaitsItsQuarantineBeforeAnotherSubscriberGetsIt) {
  PortBlocks blocks(kPublic, 1, 10, 10, kBlockQuarantine, 9);  // one block
  const std::uint16_t port = allocate(blocks, kAlice, kTcp);
  blocks.release(kTcp, port, kNanosPerSecond);
  PortBlocks::Refusal refusal = PortBlocks::Refusal::none;
  EXPECT_EQ(blocks.allocate(kBob, kTcp, 0, kBlockQuarantine, 1, refusal), 0);
  EXPECT_NE(allocate(blocks, kBob, kTcp, 0, kBlockQuarantine + kNanosPerSecond), 0);
}

TEST(PortBlocks, AFreedPortWaitsItsQuarantineEvenForItsOwnSubscriber) {
  PortBlocks blocks(kPublic, 1, 2, 2, kBlockQuarantine, 9);  // one block of two ports
  const std::uint16_t a = allocate(blocks, kAlice, kTcp, 1);
  const std::uint16_t b = allocate(blocks, kAlice, kTcp, 2);
  ASSERT_EQ(a, 1);
  ASSERT_EQ(b, 2);
  blocks.release(kTcp, a, 0);  // the block stays: b is in use
  PortBlocks::Refusal refusal = PortBlocks::Refusal::none;
  EXPECT_EQ(blocks.allocate(kAlice, kTcp, 1, kBlockQuarantine - 1, 1, refusal), 0);
  EXPECT_EQ(allocate(blocks, kAlice, kTcp, 1, kBlockQuarantine), 1);
}

TEST(PortBlocks, ABlockWithoutRoomForItsRecordIsRefusedAndHeldBlocksKeepTheirReleaseSlots) {
  PortBlocks blocks(kPublic, 1, 100, 10, 0, 11);
  PortBlockLog log(4);  // two blocks' worth: each allocation keeps a slot for its release
  blocks.attach_log(&log);
  std::set<std::uint16_t> held;
  for (std::uint32_t s = 1; s <= 2; ++s) held.insert(allocate(blocks, s << 24, kTcp));
  PortBlocks::Refusal refusal = PortBlocks::Refusal::none;
  EXPECT_EQ(blocks.allocate(3u << 24, kTcp, 0, 0, 1, refusal), 0);
  EXPECT_EQ(refusal, PortBlocks::Refusal::log_full);
  EXPECT_EQ(blocks.blocks_held(), 2u);
  // The releases find their slots although the reader took nothing yet.
  for (std::uint16_t p : held) blocks.release(kTcp, p, 1);
  const std::vector<PortBlockRecord> records = log.take_all();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[2].event, PortBlockRecord::Event::released);
  EXPECT_EQ(records[3].event, PortBlockRecord::Event::released);
  EXPECT_NE(allocate(blocks, 3u << 24, kTcp, 0, 2), 0) << "room again once the reader took the records";
}

TEST(PortBlocks, NewBlocksAreDrawnAcrossTheSlice) {
  PortBlocks blocks(kPublic, 1024, 65535, 512, 0, 13);  // 126 blocks
  std::map<std::uint16_t, int> firsts;
  for (std::uint32_t s = 1; s <= 60; ++s) ++firsts[static_cast<std::uint16_t>((allocate(blocks, s, kTcp) - 1024) / 512)];
  EXPECT_EQ(firsts.size(), 60u) << "one block each";
  int low = 0;
  for (const auto& [block, n] : firsts) low += block < 63 ? n : 0;
  // Uniform draws without replacement from 126 blocks: about 30 of 60 in the lower half (sd < 4).
  EXPECT_NEAR(low, 30, 16);
}

TEST(PortBlocks, RestoreRebuildsHeldBlocksPortsAndQuarantinesAndRefusesWhatDoesNotFit) {
  PortBlocks blocks(kPublic, 1, 100, 10, kBlockQuarantine, 1);
  EXPECT_TRUE(blocks.restore_block(kAlice, 21));
  EXPECT_FALSE(blocks.restore_block(kBob, 21)) << "held already";
  EXPECT_FALSE(blocks.restore_block(kBob, 22)) << "not a block's first port";
  EXPECT_TRUE(blocks.restore_in_use(kAlice, kUdp, 25, 7));
  EXPECT_FALSE(blocks.restore_in_use(kBob, kUdp, 26, 7)) << "Alice's block";
  EXPECT_FALSE(blocks.restore_in_use(kAlice, kUdp, 25, 8)) << "in use already";
  EXPECT_TRUE(blocks.restore_quarantined_block(41, 50));
  EXPECT_FALSE(blocks.restore_quarantined_block(51, 40)) << "out of the saved order";
  EXPECT_TRUE(blocks.restore_quarantined_port(kTcp, 22, 60));
  EXPECT_EQ(blocks.holder_of(kUdp, 25), 7u);
  EXPECT_EQ(blocks.blocks_held(), 1u);
  // Alice's next ports come from her restored block, never the quarantined port 22 before its time.
  for (int i = 0; i < 8; ++i) {
    const std::uint16_t p = allocate(blocks, kAlice, kTcp, 22, 59);
    EXPECT_GE(p, 21);
    EXPECT_LE(p, 30);
    EXPECT_NE(p, 22);
  }
  std::vector<std::pair<std::uint32_t, std::uint16_t>> held;
  blocks.for_each_held_block([&](std::uint32_t owner, std::uint16_t first, std::uint16_t last) {
    held.emplace_back(owner, first);
    EXPECT_EQ(last, first + 9);
  });
  EXPECT_EQ(held, (std::vector<std::pair<std::uint32_t, std::uint16_t>>{{kAlice, 21}}));
  int quarantined_blocks = 0;
  blocks.for_each_quarantined_block([&](std::uint16_t first, Nanos free_at) {
    EXPECT_EQ(first, 41);
    EXPECT_EQ(free_at, 50u);
    ++quarantined_blocks;
  });
  EXPECT_EQ(quarantined_blocks, 1);
}

TEST(PortBlocks, AShortLastBlockCoversTheEndOfTheSlice) {
  PortBlocks blocks(kPublic, 1, 25, 10, 0, 1);  // 10, 10 and 5 ports
  EXPECT_EQ(blocks.block_count(), 3u);
  std::set<std::uint16_t> seen;
  for (int i = 0; i < 30; ++i) {
    PortBlocks::Refusal refusal = PortBlocks::Refusal::none;
    const std::uint16_t p = blocks.allocate(kAlice, kTcp, 0, 0, 1, refusal);
    if (p == 0) break;
    EXPECT_TRUE(seen.insert(p).second);
    EXPECT_LE(p, 25);
  }
  EXPECT_EQ(seen.size(), 25u) << "every port of the slice handed out once";
  EXPECT_EQ(blocks.blocks_held(), 3u);
}

}  // namespace
}  // namespace flowtrack
