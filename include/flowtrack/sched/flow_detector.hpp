// The aggressive flow detector (AFD): which flows are heavy enough to be worth migrating.
//
// Two LFU caches of flow tags (lfu_cache.hpp): the aggressive flow cache (AFC, 16 entries) and a larger
// annex (512 by default) that qualifies flows before they reach it. A flow is aggressive exactly while it
// is in the AFC. Per observed packet:
//   - in the AFC: its count grows;
//   - in the annex: its count grows, and once it exceeds the AFC's least count (strictly) it is promoted,
//     keeping its count, and the AFC's LFU victim is demoted into the annex, keeping its count (the
//     inertia that keeps one burst of a mouse from unseating an elephant);
//   - in neither: it replaces the annex's LFU victim with count 1.
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

#include "flowtrack/io/random.hpp"
#include "flowtrack/sched/lfu_cache.hpp"

namespace flowtrack {

struct DetectorConfig {
  std::size_t cache_entries = 16;
  std::size_t annex_entries = 512;
  double sampling = 1.0;  // in (0, 1]
  std::uint64_t seed = 1;
};

class AggressiveFlowDetector {
 public:
  // Throws std::invalid_argument for a zero-entry cache or a sampling probability outside (0, 1].
  explicit AggressiveFlowDetector(const DetectorConfig& config);

  void observe(std::uint64_t flow) {
    if (sample_threshold_ != 0 && rng_.next() >= sample_threshold_) return;
    count(flow);
  }
  bool aggressive(std::uint64_t flow) const { return cache_.contains(flow); }
  std::vector<std::uint64_t> aggressive_flows() const;

 private:
  void count(std::uint64_t flow);

  LfuCache cache_;
  LfuCache annex_;
  Random rng_;
  // A packet is observed when a 64-bit draw is below this; 0 means every packet (no draw).
  std::uint64_t sample_threshold_;
};

}  // namespace flowtrack
