// Cuckoo Filtable's lookup structure (the data plane): level 1 is a (2,4) bucketized cuckoo table of
// (fingerprint, value) slots, bit-packed; level 2 is a small linear-probing table of full keys for the
// keys whose fingerprint collides with another valid key's in a shared bucket.
//
// lookup(k): compare k's fingerprint with the 8 slots of its two level-1 buckets; a match returns the
// slot's value. Otherwise look k up in level 2 by full key. The control plane guarantees that no valid
// key's fingerprint matches in its buckets unless it is that key (zero collisions between valid keys);
// an alien may still match a fingerprint (a false positive) and get some value.
//
// Fingerprint 0 marks a free level-1 slot. Concurrency: level-1 buckets are guarded by version stripes,
// level 2 by one stripe of its own. Messages apply level-2 insertions first, then level-1 writes, then
// level-2 removals; a reader validates its level-1 buckets after its level-2 read, so a key moving
// between the levels is found in one of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/internal/packed_cells.hpp"
#include "flowtrack/compact/internal/version_stripes.hpp"

namespace flowtrack::compact {

inline constexpr std::size_t kFiltableSlots = 4;

struct FiltableShape {
  std::uint64_t seed = 0;
  std::uint32_t buckets = 0;
  std::uint32_t level2_slots = 0;  // a power of two
  unsigned fingerprint_bits = 12, value_bits = 8;
  friend bool operator==(const FiltableShape&, const FiltableShape&) = default;
};

struct FiltableProbe {
  std::uint32_t bucket[2];
  std::uint64_t fingerprint;  // 1 .. 2^bits - 1
};

template <CompactKey Key>
FiltableProbe filtable_probe(const FiltableShape& shape, const Key& key) {
  constexpr std::uint64_t kFingerprintSalt = 0x3b9f1c7a5e2d8046ull;
  const std::uint64_t h = seeded_hash(key, shape.seed);
  const std::uint64_t f = seeded_hash(key, shape.seed ^ kFingerprintSalt);
  return {{reduce(low_half(h), shape.buckets), reduce(high_half(h), shape.buckets)},
          1 + f % ((1ull << shape.fingerprint_bits) - 1)};
}

template <CompactKey Key>
std::uint32_t level2_home(const FiltableShape& shape, const Key& key) {
  return static_cast<std::uint32_t>(seeded_hash(key, ~shape.seed)) & (shape.level2_slots - 1);
}

template <CompactKey Key>
struct Level2Entry {
  Key key{};
  std::uint64_t value = 0;
  std::uint64_t used = 0;
  friend bool operator==(const Level2Entry&, const Level2Entry&) = default;
};

template <CompactKey Key>
struct FiltableImage {
  FiltableShape shape;
  PackedCells level1;  // per slot: fingerprint | value << fingerprint_bits
  std::vector<Level2Entry<Key>> level2;
  friend bool operator==(const FiltableImage&, const FiltableImage&) = default;
};

template <CompactKey Key>
struct FiltableMessage {
  struct Level1Write {
    std::uint32_t position;  // bucket * 4 + slot
    std::uint64_t cell;
  };
  struct Level2Write {
    std::uint32_t position;
    Level2Entry<Key> entry;
  };
  std::vector<Level2Write> level2_inserts;  // applied first
  std::vector<Level1Write> level1;
  std::vector<Level2Write> level2_removals;  // applied last
  std::shared_ptr<const FiltableImage<Key>> image;

  bool empty() const { return level2_inserts.empty() && level1.empty() && level2_removals.empty() && !image; }
  // Wire size: 2-bit op, level, 4-byte position and the cell per level-1 write; the full key for level 2.
  std::size_t bytes() const {
    if (image) return image->level1.bytes() + image->level2.size() * sizeof(Level2Entry<Key>);
    return level1.size() * 9 + (level2_inserts.size() + level2_removals.size()) * (5 + sizeof(Key) + 4);
  }
};

template <CompactKey Key>
class FiltableLookup {
 public:
  explicit FiltableLookup(const FiltableImage<Key>& image);

  void apply(const FiltableMessage<Key>& message);

  // The value of a member; nullopt for most aliens, some value for a false positive.
  std::optional<std::uint64_t> find(const Key& key) const;
  void find_bulk(std::span<const Key> keys, std::span<std::optional<std::uint64_t>> out) const;

  FiltableImage<Key> image() const { return {shape_, level1_, level2_}; }  // with no concurrent writer
  std::size_t bytes() const;
  std::size_t array_bytes() const { return level1_.bytes() + level2_.size() * sizeof(Level2Entry<Key>); }

 private:
  std::optional<std::uint64_t> find_level2(const Key& key) const;
  // The seed changes under readers (a same-geometry image); it is read with a relaxed atomic load, the
  // other fields (fixed but for images of another geometry) plainly.
  FiltableShape current_shape() const {
    return {load_relaxed(shape_.seed), shape_.buckets, shape_.level2_slots, shape_.fingerprint_bits, shape_.value_bits};
  }

  FiltableShape shape_;
  PackedCells level1_;
  std::vector<Level2Entry<Key>> level2_;
  VersionStripes stripes_;
  VersionStripes level2_stripes_{1};
};

extern template class FiltableLookup<std::uint64_t>;
extern template class FiltableLookup<FlowKeyV4>;

}  // namespace flowtrack::compact
