// Concury's lookup structure (the data plane of the Concury load balancer), per VIP: an Othello whose
// value for a connection's 4-tuple is a Dcode (12 bits by default, at most 16), and a Dcode -> DIP row
// in which every entry is a valid DIP of that VIP. A known connection gets the Dcode the control plane
// stored for it; an unknown one gets an arbitrary Dcode, uniform because free cells hold random values,
// hence a DIP with odds following the weights; and every packet of it the same Dcode while the arrays
// are unchanged. Stateful and stateless packets take the same path: one hash, two cell reads, a search
// of the VIP's row.
//
// Layout: what a lookup of a VIP reads first (seed, sizes, the cells' address, the row's handle) is half
// a cache line per VIP in one flat array, the VIPs' epochs another, so that a burst over many VIPs
// touches no other memory before its cells. The row is kept as its runs (dcode_runs.hpp: the first
// Dcode and the DIP of each stretch of one DIP, 4 bytes a run, a power of two of them): the control
// plane's rows are one run per DIP (weighted_codes.hpp), so 32 DIPs take 128 bytes where the row took
// 8 KiB, and the runs of every VIP stay in the L1 or L2 while the rows (1 MiB for 128 VIPs) did not.
// A lookup then touches the two cells' lines, which miss beyond small arrays, and lines of the runs,
// which mostly hit; image() gives the row back entry for entry. The arrays live beside, owned per VIP.
//
// Concurrency: sequence locks following the invariant of version_stripes.hpp (odd while a rewrite is
// copied in): one per VIP, and one over the whole structure (its generation). A VIP rewrite (a pool or
// weight change) with the same geometry is copied in place under both: the same Othello geometry
// (OthelloShape::same_geometry) and a row of no more runs than the VIP's run capacity (fixed when its
// runs were last allocated: the smallest power of two holding the runs of that row). A single lookup
// validates its VIP's epoch, so it waits only for a copy of its own VIP; a bulk lookup validates a
// chunk of 32 keys against the generation (one load before, one after) and reads a chunk that raced
// with any rewrite again key by key, so it never waits for another VIP either. A rewrite of another
// geometry (the arrays' size changed, or the row has more runs than the capacity: e.g. a DIP added to
// a VIP of 32 runs, or a pin splitting one), and add_vip, need no reader inside: the callers
// (ConcuryLb, the bench's concury runs) call apply() from the thread that does the lookups, between
// bursts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/compact/dcode_runs.hpp"
#include "flowtrack/compact/lb_query.hpp"
#include "flowtrack/compact/othello_lookup.hpp"

namespace flowtrack::compact {

struct ConcuryVipImage {
  OthelloImage codes;               // 4-tuple -> Dcode
  std::vector<std::uint16_t> dips;  // Dcode -> DIP id, 2^dcode_bits entries
  friend bool operator==(const ConcuryVipImage&, const ConcuryVipImage&) = default;
};

class ConcuryLookup {
 public:
  // Every VIP's Othello has cells of exactly dcode_bits bits (no taken bit, no fingerprint), as
  // ConcuryControl's images have.
  explicit ConcuryLookup(unsigned dcode_bits = 12);

  std::uint32_t add_vip(const ConcuryVipImage& image);
  void apply(std::uint32_t vip, const ConcuryVipImage& image);

  std::uint16_t lookup(std::uint32_t vip, std::uint64_t key) const { return answer(vip, key).dip; }
  // The Dcode and the DIP the arrays give the key (a new connection's report carries the Dcode).
  struct Answer {
    std::uint32_t dcode;
    std::uint16_t dip;
  };
  Answer answer(std::uint32_t vip, std::uint64_t key) const;
  // A burst (a runtime burst of packets), in two passes over each chunk of 32 so that the cells' misses
  // overlap: hash every key and prefetch its two cells; read the cells and search the runs of each
  // Dcode's row. No branch per key. `dcodes`, when not empty, gets the Dcodes too.
  void lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips,
                   std::span<std::uint32_t> dcodes = {}) const;

  // Which code runs lookup_bulk's first pass (hash, cells, prefetch): scalar, one key at a time, or
  // AVX2, four keys a step (concury_lookup_avx2.cpp; the scalar code then takes a chunk's last n % 4
  // keys). Both give the same answers bit for bit. A new structure takes AVX2 when the CPU has it
  // (checked at run time); tests and the bench may choose either.
  enum class BulkPath { scalar, avx2 };
  static bool avx2_supported();
  void set_bulk_path(BulkPath path);
  BulkPath bulk_path() const { return avx2_ ? BulkPath::avx2 : BulkPath::scalar; }

  ConcuryVipImage image(std::uint32_t vip) const;  // with no concurrent writer; the row as given
  std::size_t vips() const { return hot_.size(); }
  std::size_t bytes() const;

 private:
  // What every lookup of a VIP reads before its cells (two VIPs a cache line). seed and epoch change
  // under readers (relaxed, and acquire / release, atomic accesses); the rest only with no reader inside
  // (the AVX2 pass reads cells and runs as one 16-byte load, so they stay first and adjacent).
  struct alignas(32) Hot {
    const std::uint64_t* cells;  // A's cells then B's, packed, dcode_bits each
    DcodeRuns::Handle runs;      // the row
    std::uint64_t seed;
    std::uint32_t size_a, size_b;
  };
  struct Owned {
    OthelloShape shape;
    PackedCells cells;
    DcodeRuns runs;
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
  // A chunk's keys between its two passes: for each key, the bit addresses of its two cells
  // (PackedCells::bit_address) and its VIP's row.
  struct ChunkCells {
    std::uint64_t a[kChunk], b[kChunk];
    DcodeRuns::Handle runs[kChunk];
  };
  template <class Width>
  void bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips, std::span<std::uint32_t> dcodes, Width width) const;
  // The first pass over keys [from, n) of a chunk: hash each key, find its cells, prefetch their lines.
  template <class Width>
  void hash_pass(const LbQuery* q, std::size_t from, std::size_t n, ChunkCells& cells, Width width) const;
  // The same for keys [0, n - n % 4) in AVX2 lanes; returns n - n % 4.
  std::size_t hash_pass_avx2(const LbQuery* q, std::size_t n, ChunkCells& cells) const;
  void point(std::uint32_t vip);  // hot_[vip] from owned_[vip]
  void check(const ConcuryVipImage& image) const;

  unsigned dcode_bits_;
  bool avx2_;  // lookup_bulk's one dispatch: which hash_pass
  std::vector<Hot> hot_;
  std::vector<std::uint32_t> epochs_;  // per VIP; odd while a rewrite is copied in
  std::uint32_t generation_ = 0;       // odd while a rewrite of any VIP is copied in
  std::vector<Owned> owned_;
};

}  // namespace flowtrack::compact
