// The port-block log of a carrier-grade NAT at scale, as an operator answers an abuse report with it:
// blocks of 512 ports, 10,000 UDP connections from 500 inside addresses in two waves (the second once
// the first's blocks have gone back and out of quarantine, so that a block passes from one subscriber
// to another), through the NAT replayed in code; its block records written by the journal writer as a
// live run writes them. The log holds one record per block given and one per block taken back, not one
// per session; and 100 random (public address, port, time) taken from what the server saw map back,
// through `flowtrack nat-log who`, to the inside address that sent them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/port_block_journal.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/runtime/port_block_journal_writer.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace nat_log_scenario_cli_test {

using Nat = Nat44<CuckooTable<FlowKeyV4>>;

constexpr std::uint32_t kSubscribers = 500;
constexpr std::uint32_t kConnectionsEach = 20;
constexpr std::uint16_t kBlockSize = 512;
constexpr std::uint32_t kServer = 0xc6336410;  // 198.51.100.16
// The NAT's clock reads this much less than the Unix clock (a replay's clock starts at 0).
constexpr std::int64_t kUnixOffset = 1'795'000'000 * kNanosPerSecond;
constexpr Nanos kPathDelay = kNanosPerMilli;  // from the NAT to the server

// What the server saw of one connection: the public endpoint, when; and who sent it.
struct Seen {
  std::uint32_t public_addr = 0;  // network order
  std::uint16_t public_port = 0;  // host order
  Nanos at = 0;                   // the NAT's clock
  std::uint32_t inside_addr = 0;  // host order
};

std::string dotted(std::uint32_t host_order) {
  return fmt::format("{}.{}.{}.{}", host_order >> 24, (host_order >> 16) & 0xff, (host_order >> 8) & 0xff, host_order & 0xff);
}

// Subscribers [first, last) each open kConnectionsEach connections to the server, one a millisecond
// from `start`; what the server saw of each goes to `seen`.
Nanos open_wave(Nat& nat, std::uint32_t first, std::uint32_t last, Nanos start, std::vector<Seen>& seen) {
  Nanos now = start;
  for (std::uint32_t s = first; s < last; ++s) {
    const std::uint32_t inside = 0x0a010000 + s + 1;  // 10.1.x.y
    for (std::uint32_t c = 0; c < kConnectionsEach; ++c, now += kNanosPerMilli) {
      std::vector<std::uint8_t> frame =
          build_frame(FrameSpec::udp4(FlowKeyV4::from_host(inside, kServer, static_cast<std::uint16_t>(30000 + c), 443, ipproto::kUdp), 8));
      NfPacket packet{frame, {}, static_cast<std::uint32_t>(frame.size()), frame.size()};
      EXPECT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
      EXPECT_EQ(process_packet(nat, packet, now), Verdict::forward);
      ParsedPacket out;
      EXPECT_EQ(parse_frame(packet.frame, LinkType::ethernet, out), ParseStatus::ok);
      seen.push_back({out.key4.src_addr, to_host16(out.key4.src_port), now + kPathDelay, inside});
    }
  }
  return now;
}

// Past every session's timeout: all of them end, and their blocks go back.
Nanos expire_all(Nat& nat, Nanos after) {
  const Nanos now = after + nat_timeouts().udp_unreplied + kNanosPerSecond;
  while (nat.expire(now) != 0) {
  }
  EXPECT_EQ(nat.blocks_held(), 0u);
  return now;
}

TEST(NatLogScenarioCli, OneRecordABlockGivenOrTakenBackAndEveryServerSampleNamesItsSender) {
  NatConfig config;
  config.inside_network = to_network32(0x0a000000);
  config.inside_prefix_length = 8;
  for (std::uint32_t i = 0; i < 4; ++i) config.pool.push_back(to_network32(0xcb007101 + i));  // 4 x 126 blocks
  config.block_size = kBlockSize;
  config.max_sessions = config.max_mappings = 2 * kSubscribers * kConnectionsEach;
  Nat nat(config, 0, 1);
  PortBlockLog log(2 * nat.block_count());
  ASSERT_TRUE(nat.attach_block_log(&log));
  const std::string journal = test::temp_config("blocks.jsonl", "");
  std::vector<Seen> seen;
  {
    PortBlockJournalWriter writer(journal, false, kUnixOffset);
    // The first wave, its end, then past the blocks' quarantine the second wave and its end.
    Nanos now = open_wave(nat, 0, kSubscribers / 2, kNanosPerSecond, seen);
    now = expire_all(nat, now);
    writer.drain(log);
    now = open_wave(nat, kSubscribers / 2, kSubscribers, now + config.port_quarantine + kNanosPerSecond, seen);
    expire_all(nat, now);
    writer.drain(log);
  }
  ASSERT_EQ(seen.size(), kSubscribers * kConnectionsEach);

  // The log: one allocation and one release per block, blocks as the server's view shows them.
  std::map<PortBlockRecord::Event, std::size_t> records;
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>> logged;  // inside, public, first port
  std::ifstream in(journal);
  for (std::string line, error; std::getline(in, line);) {
    const auto entry = parse_port_block_journal_line(line, error);
    ASSERT_TRUE(entry) << line << ": " << error;
    ++records[entry->event];
    EXPECT_EQ(entry->last_port - entry->first_port + 1, kBlockSize);
    if (entry->event == PortBlockRecord::Event::allocated) logged.insert({to_host32(entry->inside_addr), entry->public_addr, entry->first_port});
  }
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>> used;  // the blocks the server's view fell in
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::set<std::uint32_t>> holders;  // (public, first port) -> subscribers
  for (const Seen& s : seen) {
    const auto first_port = static_cast<std::uint16_t>(config.port_first + (s.public_port - config.port_first) / kBlockSize * kBlockSize);
    used.insert({s.inside_addr, s.public_addr, first_port});
    holders[{s.public_addr, first_port}].insert(s.inside_addr);
  }
  EXPECT_EQ(logged, used);
  EXPECT_EQ(records[PortBlockRecord::Event::allocated], kSubscribers) << "20 connections fit one block";
  EXPECT_EQ(records[PortBlockRecord::Event::released], kSubscribers);
  EXPECT_LT(records[PortBlockRecord::Event::allocated] + records[PortBlockRecord::Event::released], seen.size() / 5) << "not a record a session";
  std::size_t passed_on = 0;  // blocks held by a subscriber of each wave: only the time tells them apart
  for (const auto& [block, subscribers] : holders) passed_on += subscribers.size() > 1 ? 1 : 0;
  EXPECT_GT(passed_on, 0u);

  // 100 samples of the server's view, answered from the log by the command an operator runs.
  std::mt19937 random(43);
  std::uniform_int_distribution<std::size_t> pick(0, seen.size() - 1);
  for (int sample = 0; sample < 100; ++sample) {
    const Seen& s = seen[pick(random)];
    const std::string question = fmt::format("{}:{} {}", dotted(to_host32(s.public_addr)), s.public_port, format_utc_time(kUnixOffset + static_cast<std::int64_t>(s.at)));
    const auto r = testing::run_cli("nat-log who " + question + " --json --log " + journal);
    ASSERT_EQ(r.exit_code, 0) << question << ": " << r.output;
    EXPECT_EQ(testing::first_json_object(r.output).value("inside", "nobody"), dotted(s.inside_addr)) << question << ": " << r.output;
  }
}

}  // namespace nat_log_scenario_cli_test
}  // namespace flowtrack
