// State files: what is written reads back the same, and every kind of file that must not be restored
// is refused with its reason (not a state file, another version or function, cut short, corrupt,
// another configuration, a record that cannot be).
#include <gtest/gtest.h>

#include <filesystem>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/state_config_hash.hpp"
#include "flowtrack/nf/state_file.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

constexpr std::uint64_t kHash = 0x1234abcd5678ef01;
constexpr std::int64_t kSavedAt = 1'795'000'000'000'000'000;

SavedConnection<FlowKeyV4> connection(std::uint16_t port, TcpState state) {
  const FlowKeyV4 original = FlowKeyV4::from_host(0x0a000001, 0x08080808, port, 443, ipproto::kTcp);
  FlowKeyV4 reply = original.reversed();
  reply.dst_addr = to_network32(0xcb007101);
  return {original, reply, ipproto::kTcp, true, {state, Direction::reply}, 90 * kNanosPerSecond};
}

NatSnapshot nat_snapshot() {
  NatSnapshot s;
  s.mappings = {{to_network32(0x0a000001), to_network32(0xcb007101), to_network16(40000), to_network16(41000), ipproto::kTcp}};
  s.sessions = {{connection(40000, TcpState::established), 0, NatSnapshot::kNoMapping},
                {connection(40001, TcpState::fin_wait), 0, 0}};
  s.blocks = {{to_network32(0x0a000001), to_network32(0xcb007101), 40960}};
  s.quarantined_ports = {{to_network32(0xcb007101), 1500, ipproto::kUdp, 3 * kNanosPerSecond}};
  s.quarantined_blocks = {{to_network32(0xcb007101), 2048, 7 * kNanosPerSecond}};
  return s;
}

LbSnapshot lb_snapshot() {
  LbSnapshot s;
  s.services = {{"web", to_network32(0xc6120001), to_network16(443), ipproto::kTcp,
                 {{"b1", to_network32(0x0a010001), to_network16(80), 1, false, 17, -3}, {"b2", to_network32(0x0a010002), 0, 0, true, 4, 0}}}};
  s.connections = {{connection(5000, TcpState::syn_sent), 0, 1}};
  return s;
}

// Rewrites the header's checksum after an edit of the header, as a forger would.
void reseal_header(std::vector<std::uint8_t>& file) {
  const std::uint32_t crc = crc32c(std::span(file).first(kStateHeaderBytes - 4));
  for (std::size_t i = 0; i < 4; ++i) file[kStateHeaderBytes - 4 + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}
// Rewrites the body's checksum after an edit of the body, then the header's.
void reseal(std::vector<std::uint8_t>& file) {
  const std::uint32_t crc = crc32c(std::span(file).subspan(kStateHeaderBytes));
  for (std::size_t i = 0; i < 4; ++i) file[40 + i] = static_cast<std::uint8_t>(crc >> (8 * i));
  reseal_header(file);
}

void expect_refused(const std::vector<std::uint8_t>& file, const std::string& reason, std::uint64_t hash = kHash) {
  try {
    decode_nat_state(file, hash);
    ADD_FAILURE() << "decoded, expected: " << reason;
  } catch (const StateFileError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(StateFile, WhatIsWrittenReadsBackTheSame) {
  const std::vector<NatSnapshot> nat = {nat_snapshot(), NatSnapshot{}, nat_snapshot()};
  const SavedState<NatSnapshot> back = decode_nat_state(encode_nat_state(nat, kHash, kSavedAt), kHash);
  EXPECT_EQ(back.saved_unix_ns, kSavedAt);
  EXPECT_EQ(back.workers, nat);
  const std::vector<LbSnapshot> lb = {lb_snapshot()};
  EXPECT_EQ(decode_lb_state(encode_lb_state(lb, kHash, kSavedAt), kHash).workers, lb);
}

TEST(StateFile, FilesThatMustNotBeRestoredAreRefusedWithTheirReason) {
  const std::vector<NatSnapshot> nat = {nat_snapshot()};
  const std::vector<std::uint8_t> good = encode_nat_state(nat, kHash, kSavedAt);
  expect_refused({}, "not a flowtrack state file");
  expect_refused(std::vector<std::uint8_t>(good.begin(), good.begin() + 20), "not a flowtrack state file");
  std::vector<std::uint8_t> f = good;
  f[8] = 2;  // version 2
  reseal_header(f);
  expect_refused(f, "version 2 of the state format; this flowtrack reads version 1");
  expect_refused(encode_lb_state(std::vector<LbSnapshot>{lb_snapshot()}, kHash, kSavedAt), "the state of lb, not of nat");
  expect_refused(std::vector<std::uint8_t>(good.begin(), good.end() - 1), "truncated");
  f = good;
  f.push_back(0);
  expect_refused(f, "too long");
  f = good;
  f[kStateHeaderBytes + 10] ^= 0x40;
  expect_refused(f, "corrupt: its body's checksum");
  f = good;
  f[30] ^= 1;  // the save time
  expect_refused(f, "corrupt: its header's checksum");
  expect_refused(good, "saved under another configuration", kHash + 1);
}

TEST(StateFile, ARecordThatCannotBeIsRefusedEvenWithRightChecksums) {
  const std::vector<NatSnapshot> nat = {nat_snapshot()};
  const std::vector<std::uint8_t> good = encode_nat_state(nat, kHash, kSavedAt);
  // The first session's TCP state: after workers (8), the mapping count (8), one mapping (13), the
  // session count (8), two keys (26), the protocol and the replied flag (2).
  const std::size_t state_at = kStateHeaderBytes + 8 + 8 + 13 + 8 + 26 + 2;
  ASSERT_EQ(good[state_at], static_cast<std::uint8_t>(TcpState::established));
  std::vector<std::uint8_t> f = good;
  f[state_at] = 200;
  reseal(f);
  expect_refused(f, "a record that cannot be");
  f = good;
  f[kStateHeaderBytes + 8 + 7] = 0x7f;  // a mapping count of about 2^62
  reseal(f);
  expect_refused(f, "a record that cannot be");
  f = good;
  f.insert(f.end(), {1, 2, 3});
  f[32] += 3;  // the body's length
  reseal(f);
  expect_refused(f, "bytes past the last one");
}

TEST(StateFile, WrittenWholeAndReadBack) {
  const std::string path = test::temp_config("state.bin", "");
  const std::vector<std::uint8_t> bytes = encode_nat_state(std::vector<NatSnapshot>{nat_snapshot()}, kHash, kSavedAt);
  write_state_file(path, bytes);
  EXPECT_EQ(read_state_file(path), bytes);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_THROW(read_state_file(path + ".missing"), std::runtime_error);
  EXPECT_THROW(write_state_file("/nonexistent-dir/state.bin", bytes), std::runtime_error);
}

TEST(StateFile, AgingTakesTheDowntimeOffEveryRemainingTime) {
  NatSnapshot s = nat_snapshot();
  age_snapshot(s, 5 * kNanosPerSecond);
  EXPECT_EQ(s.sessions[0].connection.remaining, 85 * kNanosPerSecond);
  EXPECT_EQ(s.quarantined_ports[0].remaining, 0u);
  EXPECT_EQ(s.quarantined_blocks[0].remaining, 2 * kNanosPerSecond);
  LbSnapshot lb = lb_snapshot();
  age_snapshot(lb, 100 * kNanosPerSecond);
  EXPECT_EQ(lb.connections[0].connection.remaining, 0u);
}

TEST(StateConfigHash, ChangesWithWhatTheStateDependsOnOnly) {
  NatConfig nat;
  nat.pool = {to_network32(0xcb007101)};
  const std::uint64_t base = nat_state_hash(nat, 2);
  EXPECT_EQ(nat_state_hash(nat, 2), base);
  EXPECT_NE(nat_state_hash(nat, 1), base);
  NatConfig other = nat;
  other.pool.push_back(to_network32(0xcb007102));
  EXPECT_NE(nat_state_hash(other, 2), base);
  other = nat;
  other.block_size = 512;
  EXPECT_NE(nat_state_hash(other, 2), base);
  other = nat;
  other.timeouts.udp_replied *= 2;
  other.port_quota = 10;
  EXPECT_EQ(nat_state_hash(other, 2), base) << "timeouts and quotas apply to what comes next";
  StatefulLbConfig lb;
  lb.services = {{"web", to_network32(0xc6120001), to_network16(443), ipproto::kTcp, {{"b1", 1, 0, 1}}}};
  const std::uint64_t lb_base = lb_state_hash(lb, 1);
  lb.services[0].backends.push_back({"b2", 2, 0, 1});
  EXPECT_EQ(lb_state_hash(lb, 1), lb_base) << "the saved pool replaces the configured backends";
  lb.services[0].port = to_network16(444);
  EXPECT_NE(lb_state_hash(lb, 1), lb_base);
}

}  // namespace
}  // namespace flowtrack
