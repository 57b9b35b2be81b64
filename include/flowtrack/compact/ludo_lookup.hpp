// Ludo hashing's lookup structure (the data plane): a 1-bit Othello (the bucket locator) telling which of
// a key's two buckets holds it, and per bucket a seed and four l-bit value slots; the seed is chosen so
// that the bucket's keys hash to distinct slots. No keys, fingerprints or occupancy bits are stored.
//
// lookup(k): b = the locator's bit; bucket = (h0(k), h1(k))[b]; slot = top 2 bits of H(k, seed[bucket]).
// Seeds are seed_bits wide; the largest value means "overflow": the real seed (up to 8 bits) sits in a
// small (2,4)-cuckoo table keyed by bucket. Keys whose cuckoo insertion failed sit in a small fallback
// table of full keys, consulted first whenever it is not empty.
//
// Concurrency: the version stripes of compact/internal/version_stripes.hpp, one stripe per bucket position. A
// reader snapshots both candidate buckets' stripes, asks the locator (validated by its own stripes),
// reads the seed (and overflow entry) and the slot, and revalidates both buckets: a writer holds every
// bucket it rewrites, and both buckets of every key it moves, odd while it writes. Images with a new
// geometry (growth, shrink) must be applied with no reader inside, as for OthelloLookup.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/internal/packed_cells.hpp"
#include "flowtrack/compact/internal/version_stripes.hpp"
#include "flowtrack/compact/othello_lookup.hpp"

namespace flowtrack::compact {

inline constexpr std::size_t kLudoSlots = 4;
inline constexpr std::size_t kLudoFallbackSlots = 64;

struct LudoShape {
  std::uint64_t bucket_seed = 0;
  std::uint32_t buckets = 0;
  unsigned value_bits = 8, seed_bits = 5;

  std::uint32_t overflow_marker() const { return (1u << seed_bits) - 1; }
  friend bool operator==(const LudoShape&, const LudoShape&) = default;
};

inline std::array<std::uint32_t, 2> ludo_buckets(const LudoShape& shape, std::uint64_t hash) {
  return {reduce(low_half(hash), shape.buckets), reduce(high_half(hash), shape.buckets)};
}

// The slot of a key in a bucket with the given seed (0..255).
template <CompactKey Key>
std::uint32_t ludo_slot(const Key& key, std::uint32_t seed) {
  constexpr std::uint64_t kSlotSalt = 0x1d0c0ffee1234567ull;
  return static_cast<std::uint32_t>(seeded_hash(key, kSlotSalt + seed) >> 62);
}

// Overflow entries: (bucket + 1) << 8 | seed; 0 is a free slot. 64 bits, since a bucket id takes all
// 32: with 32-bit entries a bucket from 2^24 - 1 on (Ludo of 63.7M keys at load 0.95) lost its top bits,
// and its keys read another bucket's seed (64M keys: 109 195 wrong answers, docs/performance/compact.md).
using LudoOverflowEntry = std::uint64_t;
inline LudoOverflowEntry overflow_entry(std::uint32_t bucket, std::uint32_t seed) {
  return ((LudoOverflowEntry{bucket} + 1) << 8) | seed;
}
inline std::uint32_t overflow_bucket(LudoOverflowEntry entry) { return static_cast<std::uint32_t>((entry >> 8) - 1); }

template <CompactKey Key>
struct FallbackEntry {
  Key key{};
  std::uint64_t value = 0;
  std::uint64_t used = 0;
  friend bool operator==(const FallbackEntry&, const FallbackEntry&) = default;
};

template <CompactKey Key>
struct LudoImage {
  LudoShape shape;
  OthelloImage locator;
  PackedCells seeds;                  // seed_bits per bucket
  PackedCells slots;                  // value_bits per slot, kLudoSlots per bucket
  std::vector<LudoOverflowEntry> overflow;  // (2,4)-cuckoo of overflow entries, 4 per bucket
  std::array<FallbackEntry<Key>, kLudoFallbackSlots> fallback{};
  friend bool operator==(const LudoImage&, const LudoImage&) = default;
};

struct LudoBucketWrite {
  std::uint32_t bucket;
  std::uint32_t seed;  // the real seed, 0..255
  std::array<std::uint64_t, kLudoSlots> slots;
};

struct LudoOverflowWrite {
  LudoOverflowEntry entry;
  std::uint32_t position;
  std::uint32_t bucket;  // the bucket whose entry this writes or clears (its stripe guards it)
};
static_assert(sizeof(LudoOverflowWrite) == 16, "the 64-bit entry first: no padding");

template <CompactKey Key>
struct LudoMessage {
  OthelloMessage locator;
  std::vector<LudoBucketWrite> buckets;
  std::vector<LudoOverflowWrite> overflow;
  std::vector<std::pair<std::uint32_t, FallbackEntry<Key>>> fallback;
  std::shared_ptr<const LudoImage<Key>> image;  // non-null after a rebuild

  bool empty() const { return locator.empty() && buckets.empty() && overflow.empty() && fallback.empty() && !image; }
  // Wire size as the thesis counts it: 4-byte bucket ids, a seed byte, the slot bytes, the locator's
  // cell writes; a whole image when there is one.
  std::size_t bytes() const;
};

template <CompactKey Key>
class LudoLookup {
 public:
  explicit LudoLookup(const LudoImage<Key>& image);

  void apply(const LudoMessage<Key>& message);

  // The value of a member; arbitrary for an alien or a deleted key.
  std::uint64_t lookup(const Key& key) const;
  // A burst: every key's buckets and locator cells are prefetched before any is read.
  void lookup_bulk(std::span<const Key> keys, std::span<std::uint64_t> out) const;

  LudoImage<Key> image() const;  // with no concurrent writer
  std::size_t bytes() const;
  // The arrays alone (locator, seeds, slots, overflow, fallback), without the stripes.
  std::size_t array_bytes() const;

 private:
  std::optional<std::uint64_t> fallback_value(const Key& key) const;
  std::uint32_t seed_of(std::uint32_t bucket) const;
  // One validated read given the bucket hash; false when a write raced with it.
  bool try_read(const Key& key, std::uint32_t epoch, std::uint64_t& value) const;

  LudoShape shape_;
  std::unique_ptr<OthelloLookup> locator_;  // replaced whole when the geometry changes
  PackedCells seeds_, slots_;
  std::vector<LudoOverflowEntry> overflow_;
  std::array<FallbackEntry<Key>, kLudoFallbackSlots> fallback_;
  std::uint32_t fallback_used_ = 0;  // entries in use; relaxed atomic, checked before every lookup
  VersionStripes stripes_;
  VersionStripes fallback_stripes_{1};
};

extern template class LudoLookup<std::uint64_t>;
extern template class LudoLookup<FlowKeyV4>;

}  // namespace flowtrack::compact
