// The lookup structure of Dcode blocks (dcode_blocks.hpp) for many VIPs: a connection's Dcode from its
// VIP's image in one cache line (plus, in the rare flagged block, the overflow table). The Dcode -> DIP
// row stays Concury's (ConcuryLookup).
//
// Against ConcuryLookup's two-line layout (a throwaway harness, 128 VIPs, bursts of 32, alternating
// rounds on a busy machine, 2026-11-26): beyond the cache, where a lookup costs the lines it waits
// for, 1.9-2.1x the Maglev-style table's lookups at 1M-16M connections, where ConcuryLookup made
// 1.1-1.9x in the same rounds. In the cache it is slower than ConcuryLookup (77 instructions a lookup
// against 44: the header's seed and a multiply mix before the cells): the layouts suit different sizes.
//
// Concurrency, as ConcuryLookup's: sequence locks following version_stripes.hpp's invariant (odd while a
// rewrite is copied in), one per VIP and one over the whole structure (its generation). An image of the
// same geometry is copied in place under both, with relaxed atomic stores; readers read with relaxed
// atomic loads and validate: a single lookup against its VIP's epoch, a bulk lookup a chunk of 32 keys
// against the generation (a chunk that raced with a rewrite is read again key by key). An image of
// another geometry, and add_vip, need no reader inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/compact/internal/dcode_blocks.hpp"
#include "flowtrack/compact/lb_query.hpp"

namespace flowtrack::compact {

class DcodeBlocksLookup {
 public:
  // Every VIP's image has dcode_bits-bit cells.
  explicit DcodeBlocksLookup(unsigned dcode_bits = 12);

  std::uint32_t add_vip(const DcodeBlocksImage& image);
  void apply(std::uint32_t vip, const DcodeBlocksImage& image);

  std::uint32_t lookup(std::uint32_t vip, std::uint64_t key) const;
  // A burst, in passes over each chunk of 32 keys so that the misses of a pass overlap: hash each key,
  // find its block and prefetch the line (when the lines exceed half this core's L2, prefetch_policy.hpp);
  // load each line's header, and nothing else; read each key's two cells; then look up the overflow
  // table for the keys of flagged blocks. No branch per key but the loops'.
  // `rows`, when given (a pointer a query): each query's entry of its row at its Dcode is prefetched as
  // soon as the Dcode is known, so that a caller reading those rows next (ConcuryLookup) finds them on
  // their way.
  void lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint32_t> dcodes,
                   std::span<const std::uint16_t* const> rows = {}) const;

  const DcodeBlocksImage& image(std::uint32_t vip) const { return images_[vip]; }  // with no concurrent writer
  std::size_t vips() const { return hot_.size(); }
  std::size_t bytes() const;

 private:
  // The geometry, a constant for the default Dcode width (the compiler folds the hot path's multiplies
  // and masks) or the width's at run time; the same code serves both.
  struct DefaultGeometry {
    static constexpr DcodeGeometry get() { return DcodeGeometry(12); }
  };
  struct RuntimeGeometry {
    DcodeGeometry geometry;
    DcodeGeometry get() const { return geometry; }
  };
  static constexpr std::size_t kChunk = 32;  // keys validated together by a bulk lookup
  template <class Geometry>
  void bulk(std::span<const LbQuery> queries, std::span<std::uint32_t> dcodes, std::span<const std::uint16_t* const> rows,
            Geometry geometry) const;
  void decide_prefetch();

  DcodeGeometry geometry_;
  bool prefetch_ = false;  // changes only with no reader inside
  // Per VIP, what a lookup reads before its line (DcodeArrays); changes only with no reader inside (the
  // VIP's seed is part of the geometry, so an in-place copy leaves it).
  std::vector<DcodeArrays> hot_;
  std::vector<std::uint32_t> epochs_;  // per VIP; odd while a rewrite is copied in
  std::uint32_t generation_ = 0;       // odd while a rewrite of any VIP is copied in
  std::vector<DcodeBlocksImage> images_;
};

}  // namespace flowtrack::compact
