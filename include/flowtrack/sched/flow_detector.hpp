// The aggressive flow detector (AFD): which flows are heavy enough to be worth migrating.
//
// Two LFU caches of flow tags (lfu_cache.hpp): the aggressive flow cache (AFC, 16 entries, fully
// associative) and a larger annex (512 by default, eight ways per set) that qualifies flows before they
// reach it. A flow is aggressive exactly while it
// is in the AFC. Per observed packet:
//   - in the AFC: its count grows;
//   - in the annex: its count grows, and once it exceeds the AFC's least count (strictly) it is promoted,
//     keeping its count, and the AFC's LFU victim is demoted into the annex, keeping its count (the
//     inertia that keeps one burst of a mouse from unseating an elephant);
//   - in neither: it replaces the LFU victim of its annex set with count 1.
// A flow is in at most one of the two caches. While the AFC has free slots its least count is 0, so a
// flow is promoted at its first annex hit. Counts never decay: the LFU order is cumulative from the
// start. An annex of 0 entries gives the single-level cache (a miss replaces the AFC's victim), the
// ablation that shows why the annex is there.
//
// Sampling: with probability `sampling` a packet is observed; the others leave the detector untouched.
// One detector serves every service (the paper shows a single AFD).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flowtrack/sched/detector_config.hpp"
#include "flowtrack/sched/lfu_cache.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack {

class AggressiveFlowDetector {
 public:
  // Throws std::invalid_argument for a zero-entry cache, an annex of more than 8 entries that is not a
  // multiple of 8, or a sampling probability outside (0, 1].
  explicit AggressiveFlowDetector(const DetectorConfig& config);

  void observe(std::uint64_t flow) {
    if (sample_threshold_ != 0 && rng_.next() >= sample_threshold_) return;
    last_aggressive_ = count(flow);
    last_flow_ = flow;
  }
  bool aggressive(std::uint64_t flow) const { return flow == last_flow_ ? last_aggressive_ : cache_.contains(flow); }
  std::vector<std::uint64_t> aggressive_flows() const;

 private:
  // Counts one packet of `flow`; returns whether it is in the AFC afterwards.
  bool count(std::uint64_t flow);

  LfuCache cache_;
  LfuCache annex_;
  Random rng_;
  // A packet is observed when a 64-bit draw is below this; 0 means every packet (no draw).
  std::uint64_t sample_threshold_;
  // What count() last learnt: only count() changes the AFC, so it stays true until the next count()
  // (the scheduler asks about the flow it has just observed).
  std::uint64_t last_flow_ = LfuCache::kNoTag;
  bool last_aggressive_ = false;
};

}  // namespace flowtrack
