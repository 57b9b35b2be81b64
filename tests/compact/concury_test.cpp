// Concury's structures, in both layouts of the arrays (pairs, blocks): known connections keep their DIP
// across pool and weight changes (while others arrive and depart, too), every Dcode maps to a live DIP
// of its own VIP, unknown connections spread by weight, a rewrite of one VIP leaves the others alone;
// and the two baselines of the comparison answer what they stored.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/compact/digest_conn_table.hpp"
#include "flowtrack/compact/silkroad_table.hpp"
#include "flowtrack/util/random.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

class Concury : public ::testing::TestWithParam<ConcuryLayout> {};

struct TwoVips {
  ConcuryControl control;
  ConcuryLookup lookup;
  explicit TwoVips(ConcuryLayout layout) : control(12, 1, layout), lookup(12, layout) {
    for (std::uint16_t base : {100, 200}) {
      std::vector<std::uint16_t> dips;
      for (std::uint16_t d = 0; d < 8; ++d) dips.push_back(base + d);
      const std::uint32_t vip = control.add_vip(dips, std::vector<double>(8, 1.0));
      lookup.add_vip(control.image(vip));
    }
  }
  // A new connection as the network function meets it: the data plane's Dcode, reported and learnt.
  std::uint16_t connect(std::uint32_t vip, std::uint64_t key) {
    const ConcuryLookup::Answer answer = lookup.answer(vip, key);
    control.learn(vip, key, answer.dcode);
    return answer.dip;
  }
};

TEST_P(Concury, KnownConnectionsKeepTheirDipAcrossPoolAndWeightChanges) {
  TwoVips lb(GetParam());
  std::map<std::uint64_t, std::uint16_t> dips;
  for (std::uint64_t n = 0; n < 3000; ++n) dips[compact_key<std::uint64_t>(n)] = lb.connect(0, compact_key<std::uint64_t>(n));
  // Unchanged arrays: every packet of a connection, known or not, gets the same DIP.
  for (const auto& [key, dip] : dips) ASSERT_EQ(lb.lookup.lookup(0, key), dip);
  // DIP 103 leaves, 108 joins, the weights change.
  const std::size_t lost = lb.control.set_pool(0, {100, 101, 102, 104, 105, 106, 107, 108}, {1, 2, 1, 3, 1, 1, 1, 2});
  lb.lookup.apply(0, lb.control.image(0));
  std::size_t expected_lost = 0;
  for (const auto& [key, dip] : dips) {
    if (dip == 103) {
      ++expected_lost;
      EXPECT_NE(lb.lookup.lookup(0, key), 103);
    } else {
      ASSERT_EQ(lb.lookup.lookup(0, key), dip);
    }
  }
  EXPECT_EQ(lost, expected_lost);
}

// keep() of known connections to other DIPs (a new connection on a pin's endpoints, sent elsewhere):
// the arrays after image_after_keep send every known connection to its DIP, the kept ones to their new.
TEST_P(Concury, KeptConnectionsGoToTheirNewDipAndNoOtherKnownConnectionMoves) {
  TwoVips lb(GetParam());
  std::map<std::uint64_t, std::uint16_t> dips;
  for (std::uint64_t n = 0; n < 3000; ++n) dips[compact_key<std::uint64_t>(n)] = lb.connect(0, compact_key<std::uint64_t>(n));
  Random rng(5);
  for (int round = 0; round < 200; ++round) {
    const std::uint64_t key = compact_key<std::uint64_t>(rng.below(3000));
    const auto dip = static_cast<std::uint16_t>(100 + rng.below(8));
    ASSERT_FALSE(lb.control.keep(0, key, dip));  // every DIP has codes: no row changes
    dips[key] = dip;
    lb.lookup.apply(0, lb.control.image_after_keep(0, key, lb.lookup.image(0)));
    // New connections keep arriving between the keeps, learnt from the arrays in use.
    const std::uint64_t fresh = compact_key<std::uint64_t>(3000 + round);
    dips[fresh] = lb.connect(0, fresh);
  }
  for (const auto& [key, dip] : dips) ASSERT_EQ(lb.lookup.lookup(0, key), dip);
}

// learn_all overlaps the misses of a batch of reports; what it learns must be what learn() one report
// at a time learns, repeated reports (a retransmitted SYN) included.
TEST_P(Concury, LearningABatchOfReportsEqualsLearningThemOneByOne) {
  TwoVips one_by_one(GetParam()), batched(GetParam());
  std::vector<ConcuryControl::Report> reports;
  Random rng(11);
  for (std::uint64_t n = 0; n < 5000; ++n) {
    const auto vip = static_cast<std::uint32_t>(rng.below(2));
    const std::uint64_t key = compact_key<std::uint64_t>(rng.below(3000));
    reports.push_back({.key = key, .vip = vip, .dcode = static_cast<std::uint32_t>(rng.below(4096))});
  }
  std::size_t fresh = 0;
  for (const ConcuryControl::Report& r : reports) fresh += one_by_one.control.learn(r.vip, r.key, r.dcode) ? 1 : 0;
  std::size_t batched_fresh = 0;
  for (std::size_t from = 0; from < reports.size(); from += 37) {
    batched_fresh += batched.control.learn_all(std::span(reports).subspan(from, std::min<std::size_t>(37, reports.size() - from)));
  }
  EXPECT_EQ(batched_fresh, fresh);
  for (std::uint32_t vip = 0; vip < 2; ++vip) {
    ASSERT_EQ(batched.control.connections(vip), one_by_one.control.connections(vip));
    EXPECT_EQ(batched.control.image(vip), one_by_one.control.image(vip));
  }
  for (std::uint64_t n = 0; n < 3000; ++n) {
    for (std::uint32_t vip = 0; vip < 2; ++vip) {
      ASSERT_EQ(batched.control.dip_of(vip, compact_key<std::uint64_t>(n)), one_by_one.control.dip_of(vip, compact_key<std::uint64_t>(n)));
    }
  }
}

// Connections arrive and the oldest depart (the control plane forgets them) while the pool's weights
// change, draining DIPs to 0 and back, and the VIP's control plane grows through its capacity: after
// every change each surviving connection keeps its DIP.
TEST_P(Concury, ForgettingUnderLoadKeepsEverySurvivorsDip) {
  TwoVips lb(GetParam());
  std::deque<std::pair<std::uint64_t, std::uint16_t>> alive;  // oldest first, with the DIP it got
  Random rng(17);
  std::uint64_t next_key = 0;
  for (std::uint64_t op = 0; op < 9000; ++op) {
    const std::uint64_t key = compact_key<std::uint64_t>(next_key++);
    alive.emplace_back(key, lb.connect(0, key));
    // Three arrivals for two departures once 500 are alive: the population crosses the control plane's
    // initial capacity (1024) and the next (2048) while connections leave.
    if (alive.size() > 500 && op % 3 != 0) {
      lb.control.forget(0, alive.front().first);
      alive.pop_front();
    }
    if (op % 700 == 699) {
      std::vector<double> weights(8);
      for (double& w : weights) w = static_cast<double>(rng.below(3));
      weights[rng.below(8)] = 1;  // one DIP at least takes new connections
      lb.control.set_pool(0, {100, 101, 102, 103, 104, 105, 106, 107}, weights);
      lb.lookup.apply(0, lb.control.image(0));
      for (const auto& [known, dip] : alive) ASSERT_EQ(lb.lookup.lookup(0, known), dip) << op;
    }
  }
  ASSERT_EQ(lb.control.connections(0), alive.size());
  for (const auto& [known, dip] : alive) ASSERT_EQ(lb.control.dip_of(0, known), dip);
}

TEST_P(Concury, EveryDcodeMapsToALiveDipOfItsOwnVip) {
  TwoVips lb(GetParam());
  lb.control.set_pool(1, {200, 201, 202}, {1, 0, 1});
  lb.lookup.apply(1, lb.control.image(1));
  for (const std::uint16_t dip : lb.lookup.image(0).dips) ASSERT_TRUE(dip >= 100 && dip < 108);
  for (const std::uint16_t dip : lb.lookup.image(1).dips) ASSERT_TRUE(dip == 200 || dip == 202);
}

TEST_P(Concury, UnknownConnectionsSpreadByWeight) {
  ConcuryControl control(12, 1, GetParam());
  ConcuryLookup lookup(12, GetParam());
  const std::vector<double> weights{1, 2, 3, 4};
  const std::uint32_t vip = control.add_vip({1, 2, 3, 4}, weights);
  for (std::uint64_t n = 0; n < 500; ++n) control.learn(vip, compact_key<std::uint64_t>(n), n % 4096);
  lookup.add_vip(control.image(vip));
  std::array<double, 5> counts{};
  constexpr std::size_t kConnections = 40000;
  for (std::uint64_t n = 0; n < kConnections; ++n) ++counts[lookup.lookup(vip, compact_key<std::uint64_t>(1000000 + n))];
  for (std::size_t d = 1; d <= 4; ++d) EXPECT_NEAR(counts[d] / kConnections, weights[d - 1] / 10, 0.015) << "DIP " << d;
}

TEST_P(Concury, RewritingOneVipLeavesTheOthersUntouched) {
  TwoVips lb(GetParam());
  for (std::uint64_t n = 0; n < 500; ++n) lb.connect(1, compact_key<std::uint64_t>(n));
  const ConcuryVipImage before = lb.lookup.image(1);
  lb.control.set_pool(0, {100, 101}, {1, 1});
  lb.lookup.apply(0, lb.control.image(0));
  EXPECT_TRUE(lb.lookup.image(1) == before);
}

TEST_P(Concury, BulkLookupsAgreeWithSingleLookups) {
  TwoVips lb(GetParam());
  std::vector<LbQuery> queries;
  for (std::uint64_t n = 0; n < 1000; ++n) {
    queries.push_back({static_cast<std::uint32_t>(n % 2), compact_key<std::uint64_t>(n)});
    if (n % 3 == 0) lb.connect(queries.back().vip, queries.back().key);
  }
  std::vector<std::uint16_t> dips(queries.size());
  lb.lookup.lookup_bulk(queries, dips);
  for (std::size_t i = 0; i < queries.size(); ++i) ASSERT_EQ(dips[i], lb.lookup.lookup(queries[i].vip, queries[i].key));
}

INSTANTIATE_TEST_SUITE_P(Layouts, Concury, ::testing::Values(ConcuryLayout::pairs, ConcuryLayout::blocks),
                         [](const ::testing::TestParamInfo<ConcuryLayout>& info) {
                           return info.param == ConcuryLayout::pairs ? "pairs" : "blocks";
                         });

TEST(ConcuryBaselines, DigestTableAndSilkRoadTableAnswerWhatTheyStored) {
  DigestConnTable digest(5000);
  SilkRoadTable silkroad(5000);
  for (std::uint64_t n = 0; n < 4500; ++n) {
    ASSERT_TRUE(digest.insert(compact_key<std::uint64_t>(n), static_cast<std::uint16_t>(n)));
    ASSERT_TRUE(silkroad.insert(compact_key<std::uint64_t>(n), static_cast<std::uint8_t>(n % 64)));
  }
  std::size_t silkroad_wrong = 0;
  for (std::uint64_t n = 0; n < 4500; ++n) {
    ASSERT_EQ(digest.find(compact_key<std::uint64_t>(n)), static_cast<std::uint16_t>(n));
    silkroad_wrong += silkroad.find(compact_key<std::uint64_t>(n)) != n % 64;  // a digest twin seen first
  }
  EXPECT_FALSE(digest.find(compact_key<std::uint64_t>(99999)).has_value());
  EXPECT_LT(silkroad_wrong, 4500 / 100);
}

}  // namespace
}  // namespace flowtrack::compact
