// The migration table: flows that a scheduler moved off their hashed core, and the core they now go to.
// It is consulted before the map table, and an entry outlives the imbalance that created it (a migrated
// flow stays on its new core).
//
// Unbounded (the paper gives no capacity or expiry; only aggressive flows enter under LAPS, so it stays
// small), with one exception: entries pointing at a core that has since been given to another service are
// dead. Rather than scanning the table when a core moves, each core has an epoch that the move bumps;
// an entry records the epoch of its core, and a lookup that finds an older epoch erases the entry and
// misses, so the flow goes back to its hashed bucket. Epochs are 24 bits: an entry untouched across
// 2^24 moves of its core would wrongly revive, far beyond any run here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/sched/tag_index.hpp"

namespace flowtrack {

class MigrationTable {
 public:
  explicit MigrationTable(unsigned cores) : epochs_(cores, 0), entries_(1024) {}

  std::optional<unsigned> find(std::uint64_t flow) {
    const std::uint32_t* entry = entries_.find(flow);
    if (entry == nullptr) return std::nullopt;
    const unsigned core = *entry & kCoreMask;
    if ((*entry >> kCoreBits) != epochs_[core]) {
      entries_.erase(flow);
      return std::nullopt;
    }
    return core;
  }
  void prefetch(std::uint64_t flow) const { entries_.prefetch(flow); }
  void assign(std::uint64_t flow, unsigned core) { entries_.assign(flow, (epochs_[core] << kCoreBits) | core); }
  // Every entry that points at `core` dies (its epoch moves on).
  void invalidate_core(unsigned core) { epochs_[core] = (epochs_[core] + 1) & kEpochMask; }

 private:
  static constexpr unsigned kCoreBits = 8;  // at most 256 cores
  static constexpr std::uint32_t kCoreMask = (1u << kCoreBits) - 1;
  static constexpr std::uint32_t kEpochMask = (1u << (32 - kCoreBits)) - 1;

  std::vector<std::uint32_t> epochs_;
  TagIndex entries_;  // flow -> epoch << kCoreBits | core
};

}  // namespace flowtrack
