// The aggressive flow detector: LFU promotion and demotion, planted heavy flows found in a Zipf stream,
// and the annex's worth against a single-level cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "flowtrack/sched/detector_accuracy.hpp"
#include "flowtrack/sched/flow_detector.hpp"
#include "flowtrack/sched/lfu_cache.hpp"
#include "flowtrack/sched/tag_index.hpp"
#include "flowtrack/util/random.hpp"
#include "sched_fixtures.hpp"

namespace flowtrack {
namespace {

TEST(TagIndex, AgreesWithAReferenceMapUnderChurn) {
  TagIndex index(16);
  std::unordered_map<std::uint64_t, std::uint32_t> reference;
  Random rng(7);
  for (int step = 0; step < 200'000; ++step) {
    const std::uint64_t tag = rng.below(300);
    if (rng.chance(0.5)) {
      index.assign(tag, static_cast<std::uint32_t>(step));
      reference[tag] = static_cast<std::uint32_t>(step);
    } else {
      ASSERT_EQ(index.erase(tag), reference.erase(tag) == 1);
    }
    const std::uint64_t probe = rng.below(300);
    const std::uint32_t* found = index.find(probe);
    const auto expected = reference.find(probe);
    ASSERT_EQ(found != nullptr, expected != reference.end()) << step;
    if (found != nullptr) {
      ASSERT_EQ(*found, expected->second);
    }
  }
  EXPECT_EQ(index.size(), reference.size());
}

TEST(LfuCache, EvictsTheLeastCountThenTheOldestAtThatCount) {
  LfuCache cache(3);
  cache.insert(1, 1);
  cache.insert(2, 1);
  cache.insert(3, 1);
  EXPECT_EQ(cache.hit(1), 2u);
  // 2 and 3 both hold count 1; 2 has held it longer.
  const auto first = cache.insert(4, 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->tag, 2u);
  const auto second = cache.insert(5, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->tag, 3u);
  EXPECT_EQ(cache.remove(1), 2u);
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.hit(1), 0u);
}

TEST(LfuCache, AnAnnexOfManySetsEvictsOnlyWithinTheNewTagsSet) {
  LfuCache annex(64);  // 8 sets of 8 ways
  std::unordered_map<std::uint64_t, std::uint64_t> resident;
  // An insertion into a full set evicts one of that set's residents (with its count): the annex ends
  // holding exactly the 64 tags no eviction named, every set full.
  for (std::uint64_t tag = 0; tag < 1'000; ++tag) {
    const std::uint64_t count = 1 + (tag * 7919) % 997;
    const auto evicted = annex.insert(tag, count);
    if (evicted) {
      ASSERT_EQ(resident.count(evicted->tag), 1u);
      ASSERT_EQ(resident[evicted->tag], evicted->count);
      resident.erase(evicted->tag);
    }
    resident[tag] = count;
  }
  EXPECT_EQ(resident.size(), 64u);  // every set full
  EXPECT_EQ(annex.entries().size(), 64u);
  for (const auto& [tag, count] : resident) {
    EXPECT_TRUE(annex.contains(tag));
    EXPECT_EQ(annex.remove(tag), count);
  }
  EXPECT_TRUE(annex.entries().empty());
}

TEST(LfuCache, RefusesAnAnnexThatIsNotWholeSetsOfEight) {
  EXPECT_THROW(LfuCache(100), std::invalid_argument);
  EXPECT_NO_THROW(LfuCache(5));    // one set of five ways
  EXPECT_NO_THROW(LfuCache(104));  // 13 sets
  EXPECT_NO_THROW(LfuCache(100, /*fully_associative=*/true));
}

TEST(AggressiveFlowDetector, AnAnnexFlowPassingTheCachesLeastCountIsPromotedAndTheVictimDemoted) {
  AggressiveFlowDetector detector({.cache_entries = 2, .annex_entries = 4});
  // Fill the AFC: a flow is promoted at its first annex hit while the AFC has room.
  for (int i = 0; i < 3; ++i) detector.observe(10);  // count 3 in the AFC
  for (int i = 0; i < 2; ++i) detector.observe(20);  // count 2 in the AFC
  EXPECT_TRUE(detector.aggressive(10));
  EXPECT_TRUE(detector.aggressive(20));
  // Flow 30 needs a count above 2 (the AFC's least) to enter.
  detector.observe(30);
  detector.observe(30);
  EXPECT_FALSE(detector.aggressive(30));
  detector.observe(30);
  EXPECT_TRUE(detector.aggressive(30));
  EXPECT_FALSE(detector.aggressive(20));
  // The demoted victim kept its count (2): two more packets (count 4 > 3) bring it back.
  detector.observe(20);
  EXPECT_FALSE(detector.aggressive(20));
  detector.observe(20);
  EXPECT_TRUE(detector.aggressive(20));
}

TEST(AggressiveFlowDetector, FindsPlantedHeavyFlowsInAZipfStream) {
  // Background: 20,000 flows by a Zipf law (exponent 0.6: its heaviest flow has about 0.6 % of the
  // packets); planted: 16 flows of 1.5 % of the packets each, spread
  // through the stream. The planted ones must be exactly the AFC at the end.
  HeaderTrace trace = testing::zipf_headers({.flows = 20'000, .packets = 200'000, .exponent = 0.6, .seed = 3});
  std::set<std::uint64_t> planted;
  Random rng(11);
  for (std::uint32_t k = 0; k < 16; ++k) {
    const std::uint32_t heavy = static_cast<std::uint32_t>(trace.flows());
    trace.crc16_of_flow.push_back(static_cast<std::uint16_t>(k));
    trace.rss_hash_of_flow.push_back(k);
    planted.insert(heavy);
    for (int i = 0; i < 3'000; ++i) trace.flow_of_packet[rng.below(trace.packets())] = heavy;
  }
  AggressiveFlowDetector detector({.cache_entries = 16, .annex_entries = 512});
  for (std::uint32_t flow : trace.flow_of_packet) detector.observe(flow);
  const auto found = detector.aggressive_flows();
  EXPECT_EQ(std::set<std::uint64_t>(found.begin(), found.end()), planted);

  const DetectorAccuracy accuracy = measure_detector_accuracy(trace, {.cache_entries = 16, .annex_entries = 512});
  EXPECT_EQ(accuracy.top_found, 16u);
  EXPECT_EQ(accuracy.false_positives, 0u);
}

TEST(AggressiveFlowDetector, TheAnnexCutsFalsePositivesAgainstASingleLevelCache) {
  const HeaderTrace trace = testing::zipf_headers({.flows = 50'000, .packets = 300'000, .exponent = 0.9, .seed = 5});
  const auto single = measure_detector_accuracy(trace, {.cache_entries = 16, .annex_entries = 0});
  const auto annexed = measure_detector_accuracy(trace, {.cache_entries = 16, .annex_entries = 1024});
  EXPECT_GT(single.false_positives, 0u);  // its churning slots end holding recent mice
  EXPECT_LT(annexed.false_positive_rate, single.false_positive_rate);
  EXPECT_LE(annexed.false_positives, 4u);
}

TEST(AggressiveFlowDetector, SamplingOneInTenStillFindsTheHeaviestFlows) {
  const HeaderTrace trace = testing::zipf_headers({.flows = 20'000, .packets = 300'000, .exponent = 1.0, .seed = 9});
  const auto sampled = measure_detector_accuracy(trace, {.cache_entries = 16, .annex_entries = 512, .sampling = 0.1});
  EXPECT_GE(sampled.top_found, 12u);
}

TEST(AggressiveFlowDetector, CheckedEveryWindowItHoldsTheWindowsHeavyFlows) {
  // Zipf: the heavy flows stay heavy in every window, so the cache holds them whenever it is asked.
  const HeaderTrace trace = testing::zipf_headers({.flows = 20'000, .packets = 200'000, .exponent = 1.0, .seed = 4});
  const WindowedAccuracy w = measure_windowed_accuracy(trace, {.cache_entries = 16, .annex_entries = 512}, 10'000);
  EXPECT_EQ(w.checks, 20u);
  EXPECT_GE(w.mean, 0.9);
  EXPECT_LE(w.min, w.mean);
  EXPECT_THROW(measure_windowed_accuracy(trace, {}, 0), std::invalid_argument);
  EXPECT_THROW(measure_windowed_accuracy(trace, {}, 200'001), std::invalid_argument);
}

TEST(AggressiveFlowDetector, RefusesImpossibleConfigurations) {
  EXPECT_THROW(AggressiveFlowDetector({.cache_entries = 0}), std::invalid_argument);
  EXPECT_THROW(AggressiveFlowDetector({.sampling = 0}), std::invalid_argument);
  EXPECT_THROW(AggressiveFlowDetector({.sampling = 1.5}), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
