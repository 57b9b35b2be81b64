// The NAT's configuration file: the keys of the quota, the ICMP answer, the fragments and the port blocks, their defaults,
// errors naming the key, and the example (examples/nat.toml) loading.
#include <gtest/gtest.h>

#include "flowtrack/nf/nf_config.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

std::string nat_file(const std::string& text) { return test::temp_config("nat.toml", text); }

constexpr const char* kNatBase = "[nat]\ninside = \"10.0.0.0/16\"\npool = [\"203.0.113.1\"]\n";

TEST(NatConfig, DefaultsLeaveTheNewBehavioursOffOrBounded) {
  const NatConfig c = load_nat_config(nat_file(kNatBase));
  EXPECT_EQ(c.port_quota, 0u);
  EXPECT_FALSE(c.icmp_on_exhaustion);
  EXPECT_EQ(c.fragment_datagrams, NatConfig{}.fragment_datagrams);
  EXPECT_EQ(c.fragments_held, NatConfig{}.fragments_held);
  EXPECT_EQ(c.fragment_timeout, NatConfig{}.fragment_timeout);
}

TEST(NatConfig, QuotaIcmpAnswerAndFragmentKeysAreRead) {
  const NatConfig c = load_nat_config(nat_file(std::string(kNatBase) +
                                               "port_quota = 512\nicmp_on_exhaustion = true\nfragment_datagrams = 99\n"
                                               "fragments_held = 7\nfragment_timeout = 3\n"));
  EXPECT_EQ(c.port_quota, 512u);
  EXPECT_TRUE(c.icmp_on_exhaustion);
  EXPECT_EQ(c.fragment_datagrams, 99u);
  EXPECT_EQ(c.fragments_held, 7u);
  EXPECT_EQ(c.fragment_timeout, 3 * kNanosPerSecond);
}

TEST(NatConfig, ABadValueNamesTheKey) {
  for (const auto& [line, key] : {std::pair{"port_quota = -1", "nat.port_quota"}, {"icmp_on_exhaustion = 3", "nat.icmp_on_exhaustion"},
                                  {"fragment_timeout = 0", "nat.fragment_timeout"}, {"fragment_datagrams = 0", "nat.fragment_datagrams"}}) {
    try {
      load_nat_config(nat_file(std::string(kNatBase) + line + "\n"));
      ADD_FAILURE() << line << " loaded";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

TEST(NatConfig, BlockKeysAreReadAndTheLogNeedsBlocks) {
  const NatConfig plain = load_nat_config(nat_file(kNatBase));
  EXPECT_EQ(plain.block_size, 0u);
  EXPECT_TRUE(plain.block_log.empty());
  const NatConfig c = load_nat_config(
      nat_file(std::string(kNatBase) + "block_size = 512\nblock_log = \"/var/log/nat.jsonl\"\nblock_log_syslog = true\n"));
  EXPECT_EQ(c.block_size, 512u);
  EXPECT_EQ(c.block_log, "/var/log/nat.jsonl");
  EXPECT_TRUE(c.block_log_syslog);
  for (const auto& [line, key] : {std::pair{"block_log = \"x.jsonl\"", "nat.block_log"}, {"block_size = 70000", "nat.block_size"},
                                  {"block_log_syslog = true", "nat.block_log_syslog"}}) {
    try {
      load_nat_config(nat_file(std::string(kNatBase) + line + "\n"));
      ADD_FAILURE() << line << " loaded";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

TEST(NatConfig, TheExampleLoads) {
  const NatConfig c = load_nat_config(FLOWTRACK_SOURCE_DIR "/examples/nat.toml");
  EXPECT_EQ(c.pool.size(), 4u);
}

}  // namespace
}  // namespace flowtrack
