// "cuckoo": our bucketized cuckoo hash table.
//
// Layout: a power-of-two array of 64-byte buckets, each 8 slots of a 16-bit tag and a 32-bit FlowId
// (one cache line per bucket probe); keys and their hashes live in arrays indexed by FlowId, which
// never move. Tag 0 marks an empty slot.
//
// Probing: a key may live in two buckets: its primary (hash & mask) and its alternate
// (primary XOR scatter(tag)). The XOR makes each bucket the alternate of the other, so an entry can be
// moved to its other bucket knowing only where it is and its tag. A lookup compares the 8 tags of a
// bucket with one SIMD compare and reads a key only for matching tags.
//
// Insert: into a free slot of either bucket, else a breadth-first search (bounded to kMaxSearch
// buckets) for the shortest chain of moves ending at a free slot; the moves run from the free end back
// to the start, so at every step each key is in one of its buckets. When no path exists the insert fails
// and the table is unchanged.
//
// Bulk lookup runs in stages over the burst: compute buckets and prefetch them (both, or only the
// primary with SecondaryOnDemand, fetching the alternate only for keys the primary missed), then compare
// tags, then compare keys.
//
// Footprint: 8 bytes of bucket per slot, plus key + hash + 4-byte id stack per capacity.
// Concurrency: single thread.
#pragma once

#include <immintrin.h>

#include <array>
#include <bit>
#include <string_view>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/table/id_pool.hpp"

namespace flowtrack {

enum class CuckooPrefetch : std::uint8_t { both_buckets, secondary_on_demand };

template <FlowKeyType Key, CuckooPrefetch Prefetch = CuckooPrefetch::both_buckets>
class CuckooTable {
 public:
  using key_type = Key;
  static constexpr std::string_view kName =
      Prefetch == CuckooPrefetch::both_buckets ? "cuckoo" : "cuckoo-lazy2nd";
  static constexpr Concurrency kConcurrency = Concurrency::single_thread;
  static constexpr std::size_t kSlots = 8;

  explicit CuckooTable(std::size_t capacity)
      : buckets_(std::bit_ceil(std::max<std::size_t>((capacity + kSlots - 1) / kSlots, 2))),
        mask_(static_cast<std::uint32_t>(buckets_.size() - 1)),
        keys_(capacity),
        hashes_(capacity),
        ids_(capacity) {}

  FlowId find(const Key& key, std::uint32_t hash) const {
    const std::uint16_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    if (const FlowId id = find_in(primary, tag, key); id != kNoFlow) return id;
    return find_in(alternate(primary, tag), tag, key);
  }

  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    const std::size_t n = keys.size();
    std::array<std::uint32_t, kMaxBulk> primary;
    std::array<std::uint16_t, kMaxBulk> tags;
    for (std::size_t i = 0; i < n; ++i) {
      tags[i] = tag_of(hashes[i]);
      primary[i] = hashes[i] & mask_;
      __builtin_prefetch(&buckets_[primary[i]]);
      if constexpr (Prefetch == CuckooPrefetch::both_buckets) {
        __builtin_prefetch(&buckets_[alternate(primary[i], tags[i])]);
      }
    }
    // Tags of the primary bucket: prefetch the key of the first match (usually the only one).
    std::array<std::uint32_t, kMaxBulk> matches;
    for (std::size_t i = 0; i < n; ++i) {
      matches[i] = match_mask(buckets_[primary[i]], tags[i]);
      if (matches[i] != 0) __builtin_prefetch(&keys_[buckets_[primary[i]].ids[std::countr_zero(matches[i])]]);
    }
    std::uint64_t hits = 0;
    std::uint64_t missed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = first_key_match(buckets_[primary[i]], matches[i], keys[i]);
      if (ids[i] != kNoFlow) {
        hits |= std::uint64_t{1} << i;
      } else {
        missed |= std::uint64_t{1} << i;
        if constexpr (Prefetch == CuckooPrefetch::secondary_on_demand) {
          __builtin_prefetch(&buckets_[alternate(primary[i], tags[i])]);
        }
      }
    }
    for (; missed != 0; missed &= missed - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(missed));
      ids[i] = find_in(alternate(primary[i], tags[i]), tags[i], keys[i]);
      hits |= std::uint64_t{ids[i] != kNoFlow} << i;
    }
    return hits;
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    if (const FlowId found = find(key, hash); found != kNoFlow) return {found, InsertStatus::existed};
    if (ids_.in_use() == ids_.capacity()) return {};
    const std::uint16_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    const std::uint32_t other = alternate(primary, tag);
    Place place = free_slot(primary);
    if (!place.valid()) place = free_slot(other);
    if (!place.valid()) place = make_room(primary, other);
    if (!place.valid()) return {};
    const FlowId id = ids_.allocate();
    keys_[id] = key;
    hashes_[id] = hash;
    buckets_[place.bucket].tags[place.slot] = tag;
    buckets_[place.bucket].ids[place.slot] = id;
    return {id, InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    const std::uint16_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    for (const std::uint32_t b : {primary, alternate(primary, tag)}) {
      Bucket& bucket = buckets_[b];
      for (std::uint32_t m = match_mask(bucket, tag); m != 0; m &= m - 1) {
        const auto s = static_cast<std::size_t>(std::countr_zero(m));
        if (keys_[bucket.ids[s]] == key) {
          ids_.release(bucket.ids[s]);
          bucket.tags[s] = 0;
          return true;
        }
      }
    }
    return false;
  }

  // Positions are FlowIds (which never move, unlike slots), so interleaved inserts cannot make a sweep
  // see an entry twice or miss one.
  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    return ids_.scan(
        cursor, max_positions, [&](FlowId id) -> const Key& { return keys_[id]; },
        [&](FlowId id) { erase(keys_[id], hashes_[id]); }, visit);
  }

  // Entries stored in their alternate bucket (a measure of how hard the table works to place keys).
  std::size_t secondary_count() const {
    std::size_t count = 0;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      for (std::size_t s = 0; s < kSlots; ++s) {
        if (buckets_[b].tags[s] != 0 && (hashes_[buckets_[b].ids[s]] & mask_) != b) ++count;
      }
    }
    return count;
  }

  std::size_t scan_positions() const { return ids_.capacity(); }
  std::size_t size() const { return ids_.in_use(); }
  std::size_t capacity() const { return ids_.capacity(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + buckets_.capacity() * sizeof(Bucket) + keys_.capacity() * sizeof(Key) +
           hashes_.capacity() * sizeof(std::uint32_t) + ids_.memory_bytes();
  }

 private:
  struct alignas(64) Bucket {
    std::array<std::uint16_t, kSlots> tags{};  // 0: empty slot
    std::array<FlowId, kSlots> ids{};
  };
  static_assert(sizeof(Bucket) == 64);

  struct Place {
    std::uint32_t bucket = 0;
    std::uint32_t slot = kSlots;
    bool valid() const { return slot < kSlots; }
  };

  // The tag comes from a multiplicative remix of the hash, so it is not correlated with the low bits
  // that chose the bucket; it is never 0 (0 means empty).
  static std::uint16_t tag_of(std::uint32_t hash) {
    const auto tag = static_cast<std::uint16_t>((hash * 0x9E3779B1u) >> 16);
    return tag == 0 ? 1 : tag;
  }

  std::uint32_t alternate(std::uint32_t bucket, std::uint16_t tag) const {
    return (bucket ^ (tag * 0x5bd1e995u)) & mask_;
  }

  // Bit s set when slot s holds `tag`.
  static std::uint32_t match_mask(const Bucket& bucket, std::uint16_t tag) {
    const __m128i tags = _mm_load_si128(reinterpret_cast<const __m128i*>(bucket.tags.data()));
    const __m128i equal = _mm_cmpeq_epi16(tags, _mm_set1_epi16(static_cast<short>(tag)));
    // Narrow the 16-bit lanes (0 or -1) to bytes, then one bit per slot.
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(equal, _mm_setzero_si128())));
  }

  FlowId first_key_match(const Bucket& bucket, std::uint32_t matches, const Key& key) const {
    for (; matches != 0; matches &= matches - 1) {
      const FlowId id = bucket.ids[std::countr_zero(matches)];
      if (keys_[id] == key) return id;
    }
    return kNoFlow;
  }

  FlowId find_in(std::uint32_t b, std::uint16_t tag, const Key& key) const {
    return first_key_match(buckets_[b], match_mask(buckets_[b], tag), key);
  }

  Place free_slot(std::uint32_t b) const {
    const std::uint32_t empty = match_mask(buckets_[b], 0);
    return empty == 0 ? Place{} : Place{b, static_cast<std::uint32_t>(std::countr_zero(empty))};
  }

  // Breadth-first search from both candidate buckets for a bucket with a free slot; then moves the
  // entries along the path one step each, last first, and returns the slot freed in a start bucket.
  Place make_room(std::uint32_t first, std::uint32_t second) {
    struct Node {
      std::uint32_t bucket;
      std::int32_t parent;   // index into `nodes`, -1 for a start bucket
      std::uint32_t slot;    // the slot of the parent bucket whose entry moves here
    };
    std::array<Node, kMaxSearch> nodes;
    std::size_t count = 0;
    nodes[count++] = {first, -1, 0};
    if (second != first) nodes[count++] = {second, -1, 0};
    for (std::size_t head = 0; head < count; ++head) {
      const std::uint32_t b = nodes[head].bucket;
      if (const Place free = free_slot(b); free.valid()) {
        return move_along(nodes.data(), static_cast<std::int32_t>(head), free.slot);
      }
      for (std::uint32_t s = 0; s < kSlots && count < kMaxSearch; ++s) {
        const std::uint32_t next = alternate(b, buckets_[b].tags[s]);
        if (next != b) nodes[count++] = {next, static_cast<std::int32_t>(head), s};
      }
    }
    return {};
  }

  template <class Node>
  Place move_along(const Node* nodes, std::int32_t at, std::uint32_t free_slot_index) {
    while (nodes[at].parent >= 0) {
      const Node& node = nodes[at];
      Bucket& from = buckets_[nodes[node.parent].bucket];
      Bucket& to = buckets_[node.bucket];
      // Copy into the free slot first, then free the source: the key is never absent from both.
      to.ids[free_slot_index] = from.ids[node.slot];
      to.tags[free_slot_index] = from.tags[node.slot];
      from.tags[node.slot] = 0;
      free_slot_index = node.slot;
      at = node.parent;
    }
    return {nodes[at].bucket, free_slot_index};
  }

  static constexpr std::size_t kMaxSearch = 512;

  std::vector<Bucket> buckets_;
  std::uint32_t mask_;
  std::vector<Key> keys_;              // by id
  std::vector<std::uint32_t> hashes_;  // by id: scan erases by id
  IdPool ids_;
};

}  // namespace flowtrack
