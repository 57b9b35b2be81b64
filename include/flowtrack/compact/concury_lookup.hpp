// Concury's lookup structure (the data plane of the Concury load balancer), per VIP: an Othello whose
// value for a connection's 4-tuple is a Dcode (12 bits by default), and a Dcode -> DIP row in which every
// entry is a valid DIP of that VIP. A known connection gets the Dcode the control plane stored for it; an
// unknown one gets an arbitrary Dcode, uniform because free cells hold random values, hence a DIP with
// odds following the weights; and every packet of it the same Dcode while the arrays are unchanged.
// Stateful and stateless packets take the same path: one hash, two cell reads, one row read.
//
// Layout: what a lookup of a VIP reads first (seed, sizes, the cells' and the row's addresses) is half
// a cache line per VIP in one flat array, the VIPs' epochs another, so that a burst over many VIPs
// touches no other memory before its cells. The arrays themselves live beside, owned per VIP.
//
// The arrays come in two layouts (concury_layout.hpp); in the blocks layout the Dcodes are read by a
// DcodeBlocksLookup, and the rows, the sequence locks and the chunks' validation are this class's, as in
// the pairs layout.
//
// Concurrency: sequence locks following the invariant of version_stripes.hpp (odd while a rewrite is
// copied in): one per VIP, and one over the whole structure (its generation). A VIP rewrite (a pool or
// weight change) with the same geometry is copied in place under both. A single lookup validates its
// VIP's epoch, so it waits only for a copy of its own VIP; a bulk lookup validates a chunk of 32 keys
// against the generation (one load before, one after) and reads a chunk that raced with any rewrite
// again key by key, so it never waits for another VIP either. A rewrite that changes the arrays' size,
// and add_vip, need no reader inside.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "flowtrack/compact/concury_layout.hpp"
#include "flowtrack/compact/dcode_blocks_lookup.hpp"
#include "flowtrack/compact/lb_query.hpp"
#include "flowtrack/compact/othello_lookup.hpp"

namespace flowtrack::compact {

struct ConcuryVipImage {
  std::variant<OthelloImage, DcodeBlocksImage> codes;  // 4-tuple -> Dcode, in the structure's layout
  std::vector<std::uint16_t> dips;                     // Dcode -> DIP id, 2^dcode_bits entries
  friend bool operator==(const ConcuryVipImage&, const ConcuryVipImage&) = default;
};

class ConcuryLookup {
 public:
  // Every VIP's arrays are in `layout`, with cells of exactly dcode_bits bits (no taken bit, no
  // fingerprint), as the images of a ConcuryControl of the same layout are.
  explicit ConcuryLookup(unsigned dcode_bits = 12, ConcuryLayout layout = ConcuryLayout::pairs);

  std::uint32_t add_vip(const ConcuryVipImage& image);
  void apply(std::uint32_t vip, const ConcuryVipImage& image);

  std::uint16_t lookup(std::uint32_t vip, std::uint64_t key) const { return answer(vip, key).dip; }
  // The Dcode and the DIP the arrays give the key (a new connection's report carries the Dcode).
  struct Answer {
    std::uint32_t dcode;
    std::uint16_t dip;
  };
  Answer answer(std::uint32_t vip, std::uint64_t key) const;
  // A burst (a runtime burst of packets), in three passes over each chunk of 32 so that the misses of a
  // pass overlap: hash every key and prefetch its two cells; read the cells and prefetch the row entry
  // of each Dcode; read the row. No branch per key. The prefetches are left out while the VIPs' cells
  // fit this core's L2 (prefetch_policy.hpp). `dcodes`, when not empty, gets the Dcodes too.
  void lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips,
                   std::span<std::uint32_t> dcodes = {}) const;

  // Which code runs lookup_bulk's first pass (hash, cells, prefetch) in the pairs layout: scalar, one
  // key at a time, or AVX2, four keys a step (concury_lookup_avx2.cpp; the scalar code then takes a chunk's last n % 4
  // keys). Both give the same answers bit for bit. A new structure takes AVX2 when the CPU has it
  // (checked at run time); tests and the bench may choose either.
  enum class BulkPath { scalar, avx2 };
  static bool avx2_supported();
  void set_bulk_path(BulkPath path);
  BulkPath bulk_path() const { return avx2_ && !blocks_ ? BulkPath::avx2 : BulkPath::scalar; }

  ConcuryVipImage image(std::uint32_t vip) const;  // with no concurrent writer
  std::size_t vips() const { return hot_.size(); }
  std::size_t bytes() const;

 private:
  // What every lookup of a VIP reads before its cells (two VIPs a cache line). seed and epoch change
  // under readers (relaxed, and acquire / release, atomic accesses); the rest only with no reader inside
  // (the AVX2 pass reads cells and both sizes as one 16-byte load, so they stay first and adjacent).
  struct alignas(32) Hot {
    const std::uint64_t* cells;  // A's cells then B's, packed, dcode_bits each
    std::uint32_t size_a, size_b;
    const std::uint16_t* dips;  // the row
    std::uint64_t seed;
  };
  struct Owned {  // in the blocks layout, shape and cells stay empty (the codes are in blocks_)
    OthelloShape shape;
    PackedCells cells;
    std::vector<std::uint16_t> dips;
  };
  // The cell width, a constant for the default Dcode width (the compiler folds every multiply and mask
  // of the hot path), else read at run time; the same code serves both.
  template <unsigned kBits>
  struct FixedWidth {
    static constexpr unsigned bits() { return kBits; }
  };
  struct AnyWidth {
    unsigned width;
    unsigned bits() const { return width; }
  };
  template <class Width>
  static std::uint32_t dcode_of(const Hot& vip, std::uint64_t key, Width width);
  static constexpr std::size_t kChunk = 32;  // keys validated together by a bulk lookup
  // A chunk's keys between its first pass and the others: for each key, the bit addresses of its
  // two cells (PackedCells::bit_address) and its VIP's row.
  struct ChunkCells {
    std::uint64_t a[kChunk], b[kChunk];
    const std::uint16_t* row[kChunk];
  };
  template <class Width>
  void bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips, std::span<std::uint32_t> dcodes, Width width) const;
  // The blocks layout's bulk lookup: the chunk's Dcodes from blocks_, then its rows.
  void bulk_blocks(std::span<const LbQuery> queries, std::span<std::uint16_t> dips, std::span<std::uint32_t> dcodes) const;
  // The rows of a chunk whose Dcodes are known (their entries prefetched, when that pays, as each Dcode
  // was found), and its validation (both layouts): a chunk that raced with a rewrite is read again.
  void rows_of_chunk(const LbQuery* q, std::size_t n, const std::uint16_t* const* rows, std::uint32_t* code,
                     std::uint16_t* out, std::uint32_t generation) const;
  // The first pass over keys [from, n) of a chunk: hash each key, find its cells, prefetch their lines.
  template <class Width>
  void hash_pass(const LbQuery* q, std::size_t from, std::size_t n, ChunkCells& cells, Width width) const;
  // The same for keys [0, n - n % 4) in AVX2 lanes; returns n - n % 4.
  std::size_t hash_pass_avx2(const LbQuery* q, std::size_t n, ChunkCells& cells) const;
  void point(std::uint32_t vip);  // hot_[vip] from owned_[vip]
  void decide_prefetch();         // prefetch_ from the cells' bytes, whenever they change size
  void check(const ConcuryVipImage& image) const;
  // The Dcode of a key by a single lookup, in the structure's layout.
  std::uint32_t dcode_of_key(std::uint32_t vip, std::uint64_t key) const;

  unsigned dcode_bits_;
  bool avx2_;  // lookup_bulk's one dispatch: which hash_pass
  // Whether bulk lookups prefetch cells and row entries; changes only with no reader inside (as sizes do).
  bool prefetch_ = false;
  std::vector<Hot> hot_;
  std::vector<std::uint32_t> epochs_;  // per VIP; odd while a rewrite is copied in
  std::uint32_t generation_ = 0;       // odd while a rewrite of any VIP is copied in
  std::vector<Owned> owned_;
  std::unique_ptr<DcodeBlocksLookup> blocks_;  // the codes in the blocks layout, else null
};

}  // namespace flowtrack::compact
