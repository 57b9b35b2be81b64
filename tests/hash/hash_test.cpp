#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <bitset>
#include <random>
#include <set>
#include <string_view>

#include "flowtrack/hash/crc16.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/hash/seeded_hash.hpp"
#include "flowtrack/hash/toeplitz.hpp"

namespace flowtrack {
namespace {

std::span<const std::uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

TEST(Crc32c, CheckValue) {
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
  EXPECT_EQ(~crc32c_update_portable(~0u, bytes_of("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(bytes_of("")), 0u);
}

TEST(Crc32c, HardwareAndPortableAgree) {
  std::mt19937 rng(1);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint8_t> data(rng() % 100);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const std::uint32_t seed = rng();
    ASSERT_EQ(crc32c_update(seed, data), crc32c_update_portable(seed, data));
  }
}

TEST(Crc32c, FlowHashIsCrcOfTheKeyBytes) {
  const auto key = FlowKeyV4::from_host(0x0a000001, 0x0a000002, 10, 20, ipproto::kTcp);
  const std::span<const std::uint8_t> raw(reinterpret_cast<const std::uint8_t*>(&key), sizeof(key));
  EXPECT_EQ(flow_hash(key, 0x1234), crc32c_update_portable(0x1234, raw));
  FlowKeyV6 key6;
  key6.src_addr[3] = 9;
  key6.protocol = ipproto::kUdp;
  const std::span<const std::uint8_t> raw6(reinterpret_cast<const std::uint8_t*>(&key6), sizeof(key6));
  EXPECT_EQ(flow_hash(key6, 7), crc32c_update_portable(7, raw6));
}

TEST(Crc32c, FlowHashSpreadsSequentialKeysOverAllBits) {
  // Keys that differ only in the client port must spread over the low and the high bits alike.
  std::array<int, 256> low{}, high{};
  for (std::uint32_t port = 0; port < 65536; ++port) {
    const auto key = FlowKeyV4::from_host(0x0a000001, 0xc6120001, static_cast<std::uint16_t>(port), 80, ipproto::kTcp);
    const std::uint32_t h = flow_hash(key);
    ++low[h & 0xff];
    ++high[h >> 24];
  }
  for (int i = 0; i < 256; ++i) {
    EXPECT_GT(low[i], 128);  // expectation 256 per bin
    EXPECT_GT(high[i], 128);
  }
}

TEST(Crc16, CcittFalseCheckValue) {
  EXPECT_EQ(crc16_ccitt_false(bytes_of("123456789")), 0x29B1);
  const auto key = FlowKeyV4::from_host(1, 2, 3, 4, ipproto::kTcp);
  EXPECT_EQ(crc16_flow(key), crc16_ccitt_false({reinterpret_cast<const std::uint8_t*>(&key), 13}));
}

// The Microsoft RSS verification suite: (source, destination) -> hash over addresses only and over
// addresses and TCP ports, with the default key.
struct RssVector {
  const char* src;
  std::uint16_t src_port;
  const char* dst;
  std::uint16_t dst_port;
  std::uint32_t addresses_only;
  std::uint32_t with_ports;
};

const RssVector kIpv4Vectors[] = {
    {"66.9.149.187", 2794, "161.142.100.80", 1766, 0x323e8fc2, 0x51ccc178},
    {"199.92.111.2", 14230, "65.69.140.83", 4739, 0xd718262a, 0xc626b0ea},
    {"24.19.198.95", 12898, "12.22.207.184", 38024, 0xd2d0a5de, 0x5c2b394a},
    {"38.27.205.30", 48228, "209.142.163.6", 2217, 0x82989176, 0xafc7327f},
    {"153.39.163.191", 44251, "202.188.127.2", 1303, 0x5d1809c5, 0x10e828a2},
};

const RssVector kIpv6Vectors[] = {
    {"3ffe:2501:200:1fff::7", 2794, "3ffe:2501:200:3::1", 1766, 0x2cc18cd5, 0x40207d3d},
    {"3ffe:501:8::260:97ff:fe40:efab", 14230, "ff02::1", 4739, 0x0f0c461c, 0xdde51bbf},
    {"3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, "fe80::200:f8ff:fe21:67cf", 38024, 0x4b61e985, 0x02d1feef},
};

TEST(Toeplitz, MicrosoftIpv4Vectors) {
  const ToeplitzHasher hasher;
  for (const auto& v : kIpv4Vectors) {
    FlowKeyV4 key;
    ASSERT_EQ(inet_pton(AF_INET, v.src, &key.src_addr), 1);
    ASSERT_EQ(inet_pton(AF_INET, v.dst, &key.dst_addr), 1);
    key.src_port = to_network16(v.src_port);
    key.dst_port = to_network16(v.dst_port);
    key.protocol = ipproto::kTcp;
    EXPECT_EQ(hasher.hash(key, false), v.addresses_only) << v.src;
    EXPECT_EQ(hasher.hash(key, true), v.with_ports) << v.src;
  }
}

TEST(Toeplitz, MicrosoftIpv6Vectors) {
  const ToeplitzHasher hasher;
  for (const auto& v : kIpv6Vectors) {
    FlowKeyV6 key;
    ASSERT_EQ(inet_pton(AF_INET6, v.src, key.src_addr.data()), 1);
    ASSERT_EQ(inet_pton(AF_INET6, v.dst, key.dst_addr.data()), 1);
    key.src_port = to_network16(v.src_port);
    key.dst_port = to_network16(v.dst_port);
    key.protocol = ipproto::kTcp;
    EXPECT_EQ(hasher.hash(key, false), v.addresses_only) << v.src;
    EXPECT_EQ(hasher.hash(key, true), v.with_ports) << v.src;
  }
}

TEST(Toeplitz, TableDrivenEqualsBitByBit) {
  std::mt19937 rng(3);
  std::array<std::uint8_t, 40> key;
  for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  const ToeplitzHasher hasher(key);
  for (int round = 0; round < 500; ++round) {
    std::vector<std::uint8_t> input(rng() % (ToeplitzHasher::kMaxInputBytes + 1));
    for (auto& b : input) b = static_cast<std::uint8_t>(rng());
    ASSERT_EQ(hasher.hash(input), toeplitz_reference(key, input));
  }
}

TEST(Toeplitz, SymmetricKeyHashesBothDirectionsAlike) {
  const ToeplitzHasher symmetric(kSymmetricRssKey);
  const ToeplitzHasher standard;
  std::mt19937 rng(5);
  int standard_differs = 0;
  for (int round = 0; round < 1000; ++round) {
    const auto key = FlowKeyV4::from_host(rng(), rng(), static_cast<std::uint16_t>(rng()),
                                          static_cast<std::uint16_t>(rng()), ipproto::kTcp);
    EXPECT_EQ(symmetric.hash(key), symmetric.hash(key.reversed()));
    FlowKeyV6 key6;
    for (auto& b : key6.src_addr) b = static_cast<std::uint8_t>(rng());
    for (auto& b : key6.dst_addr) b = static_cast<std::uint8_t>(rng());
    key6.src_port = static_cast<std::uint16_t>(rng());
    key6.dst_port = static_cast<std::uint16_t>(rng());
    EXPECT_EQ(symmetric.hash(key6), symmetric.hash(key6.reversed()));
    standard_differs += standard.hash(key) != standard.hash(key.reversed());
  }
  EXPECT_GT(standard_differs, 990);  // the default key is not symmetric: the test above means something
}

// The price of the symmetry: under a key of period 16 bits, the window each input bit selects depends on
// the bit's position modulo 16 only, so the hash is a function of the XOR of the input's 16-bit words:
// 65 536 values at most, whatever the tuples. The live data plane therefore does not take the NIC's
// hash as its tables' flow hash (docs/performance/live.md): a million connections would share them.
TEST(Toeplitz, SymmetricKeyHashDependsOnTheXorOfTheSixteenBitWordsAlone) {
  const ToeplitzHasher symmetric(kSymmetricRssKey);
  std::mt19937 rng(11);
  const auto words_xor = [](const FlowKeyV4& key) {
    const std::uint32_t src = ntohl(key.src_addr), dst = ntohl(key.dst_addr);
    return static_cast<std::uint16_t>((src >> 16) ^ src ^ (dst >> 16) ^ dst ^ ntohs(key.src_port) ^ ntohs(key.dst_port));
  };
  std::set<std::uint32_t> hashes;
  for (int round = 0; round < 200'000; ++round) {
    const auto key = FlowKeyV4::from_host(rng(), rng(), static_cast<std::uint16_t>(rng()), static_cast<std::uint16_t>(rng()), ipproto::kTcp);
    // Another tuple, all of whose fields differ, with the same XOR of words: the same hash.
    auto other = FlowKeyV4::from_host(rng(), rng(), static_cast<std::uint16_t>(rng()), 0, ipproto::kUdp);
    other.dst_port = htons(static_cast<std::uint16_t>(words_xor(key) ^ words_xor(other)));
    ASSERT_EQ(symmetric.hash(other), symmetric.hash(key));
    hashes.insert(symmetric.hash(key));
  }
  EXPECT_LE(hashes.size(), 65'536u);
  EXPECT_GT(hashes.size(), 60'000u);  // and the 16 bits are all used: 200 000 tuples reach nearly all
}

TEST(RedirectionTable, RoundRobinAndReconfigure) {
  RedirectionTable reta(3);
  EXPECT_EQ(reta.size(), 128u);
  std::array<int, 3> count{};
  for (std::uint32_t h = 0; h < 128; ++h) ++count[reta.queue(h)];
  EXPECT_EQ(count[0], 43);
  EXPECT_EQ(count[1], 43);
  EXPECT_EQ(count[2], 42);
  EXPECT_EQ(reta.queue(0x12345680u), reta.queue(0x00000000u));  // only the low 7 bits matter
  reta.set(5, 2);
  EXPECT_EQ(reta.queue(5), 2u);
  reta.fill_round_robin(1);
  EXPECT_EQ(reta.queue(77), 0u);
  EXPECT_THROW(RedirectionTable(2, 100), std::invalid_argument);
  EXPECT_THROW(RedirectionTable(0), std::invalid_argument);
}

TEST(SeededHash, SeedsGiveIndependentLookingOutputs) {
  // For many keys, the outputs under two seeds agree in about half of their bits, and each output bit is
  // set about half of the time: loose bounds (many standard deviations) so the test cannot flake.
  constexpr int kKeys = 20000;
  std::array<int, 64> ones{};
  long agreeing_bits = 0;
  for (int i = 0; i < kKeys; ++i) {
    const auto key = FlowKeyV4::from_host(0x0a000000u + i, 0xc6120001, 1000, 80, ipproto::kTcp);
    const std::uint64_t a = seeded_hash(key, 1);
    const std::uint64_t b = seeded_hash(key, 2);
    agreeing_bits += 64 - std::bitset<64>(a ^ b).count();
    for (int bit = 0; bit < 64; ++bit) ones[bit] += (a >> bit) & 1;
  }
  const double agreement = static_cast<double>(agreeing_bits) / (64.0 * kKeys);
  EXPECT_NEAR(agreement, 0.5, 0.01);
  for (int bit = 0; bit < 64; ++bit) EXPECT_NEAR(ones[bit] / double(kKeys), 0.5, 0.03) << bit;
  EXPECT_NE(seeded_hash(std::uint64_t{5}, 1), seeded_hash(std::uint64_t{5}, 2));
}

}  // namespace
}  // namespace flowtrack
