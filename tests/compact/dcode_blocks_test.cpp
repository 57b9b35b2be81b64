// DcodeBlocks (Concury's Dcode -> DIP table with block entries first): every Dcode's entry holds the
// row's DIP, for rows of one DIP, of weighted ranges whose borders fall inside blocks, with pins, with
// the DIP 0xffff (kMixed's value) in and out of blocks, and random rows; at Dcode widths below, at and
// above the block bits. And the lookup structure answers with the row's DIP through them.
#include <gtest/gtest.h>

#include <random>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/compact/dcode_blocks.hpp"
#include "flowtrack/compact/weighted_codes.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

void expect_row_answers(const std::vector<std::uint16_t>& row, unsigned dcode_bits) {
  const std::vector<std::uint16_t> table = DcodeBlocks::table(row, dcode_bits);
  ASSERT_EQ(table.size(), DcodeBlocks::blocks(dcode_bits) + row.size());
  for (std::uint32_t d = 0; d < row.size(); ++d) {
    ASSERT_EQ(table[DcodeBlocks::entry(table.data(), d, dcode_bits)], row[d]) << "Dcode " << d << ", width " << dcode_bits;
  }
}

TEST(DcodeBlocks, EveryDcodesEntryHoldsItsRowsDip) {
  std::mt19937_64 rng(3);
  for (const unsigned bits : {1u, 5u, 6u, 7u, 9u, 12u, 16u}) {
    const std::size_t size = std::size_t{1} << bits;
    expect_row_answers(std::vector<std::uint16_t>(size, 7), bits);
    expect_row_answers(std::vector<std::uint16_t>(size, DcodeBlocks::kMixed), bits);
    const std::vector<std::uint16_t> backends{1, 2, 3, 0xffff, 5};
    std::vector<std::uint16_t> weighted = weighted_code_table(backends, std::vector<double>{1, 2, 3, 4, 5}, bits);
    expect_row_answers(weighted, bits);
    if (bits >= 3) {
      pin_codes(weighted, std::vector<std::uint16_t>{9, 10});
      expect_row_answers(weighted, bits);
    }
    std::vector<std::uint16_t> random(size);
    for (std::uint16_t& dip : random) dip = static_cast<std::uint16_t>(rng() % 3 == 0 ? 0xffff : rng() % 4);
    expect_row_answers(random, bits);
  }
}

TEST(DcodeBlocks, LookupsAnswerWithTheRowsDipOfTheirDcode) {
  for (const unsigned bits : {5u, 12u}) {
    ConcuryControl control(bits, 5);
    ConcuryLookup lookup(bits);
    const std::uint32_t vip = control.add_vip({10, 11, 12, 13}, {1, 2, 3, 4});
    for (std::uint64_t n = 0; n < 200; ++n) control.learn(vip, testing::compact_key<std::uint64_t>(n), static_cast<std::uint32_t>(n % (1u << bits)));
    lookup.add_vip(control.image(vip));
    control.set_pool(vip, {10, 12, 13, 14}, {3, 1, 0, 2});  // an in-place rewrite: a pin, borders moved
    lookup.apply(vip, control.image(vip));
    const ConcuryVipImage image = lookup.image(vip);
    for (std::uint64_t n = 0; n < 20000; ++n) {
      const ConcuryLookup::Answer a = lookup.answer(vip, testing::compact_key<std::uint64_t>(n));
      ASSERT_EQ(a.dip, image.dips[a.dcode]) << "key " << n << ", width " << bits;
    }
  }
}

}  // namespace
}  // namespace flowtrack::compact
