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
// Insert: into a free slot of either bucket, else the breadth-first displacement of cuckoo_path.hpp.
// When no path exists the insert fails and the table is unchanged.
//
// Bulk lookup runs in stages over the burst: compute buckets and prefetch them, then compare tags, then
// compare keys. Prefetch chooses what the first stage fetches: only the primary bucket, fetching the
// alternate for the keys the primary missed ("cuckoo", the default: at load 0.9 most hits are in the
// primary, and at 16M entries the saved memory traffic is what counts), or both buckets at once
// ("cuckoo-prefetch2").
//
// Readers chooses the concurrency contract:
//  - single_thread: no concurrent calls.
//  - optimistic ("cuckoo-lf"): one writer thread (insert, erase, scan) and any number of reader threads
//    (find, find_bulk) at once, readers never blocking. MemC3-style optimistic versioning: a writer
//    makes a stripe's version odd before it changes a bucket of that stripe and even again after; a reader
//    reads the versions of the key's two buckets, searches, and retries if either was odd or has
//    changed. A displacement copies the entry into its new bucket before clearing the old one, so a
//    reader that validates has seen a consistent snapshot of both buckets. Freed FlowIds may be reused at
//    once: a reader that read an id from a bucket before the erase fails validation. What the caller's
//    state array does with a freed id while a reader may still use it is the caller's business (the
//    sync layer defers reuse by a grace period).
//
// Ids: the table's own (insert: an id stack), or its caller's (insert_named, the NamedIdTable contract of
// flow_table.hpp: the connection tracker names each entry after its connection and direction).
//
// Footprint: 8 bytes of bucket per slot, plus key + hash + 4-byte id stack per capacity (and 4 bytes per
// bucket of version stripes, at most 32 KiB, in optimistic mode).
#pragma once

#include <immintrin.h>

#include <array>
#include <atomic>
#include <bit>
#include <string_view>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/table/huge_page_allocator.hpp"
#include "flowtrack/table/id_pool.hpp"
#include "flowtrack/table/internal/cuckoo_path.hpp"
#include "flowtrack/util/assert.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack {

enum class CuckooPrefetch : std::uint8_t { both_buckets, secondary_on_demand };
enum class CuckooReaders : std::uint8_t { single_thread, optimistic };

namespace detail {
constexpr std::string_view cuckoo_name(CuckooPrefetch prefetch, CuckooReaders readers) {
  if (readers == CuckooReaders::optimistic) {
    return prefetch == CuckooPrefetch::secondary_on_demand ? "cuckoo-lf" : "cuckoo-lf-prefetch2";
  }
  return prefetch == CuckooPrefetch::secondary_on_demand ? "cuckoo" : "cuckoo-prefetch2";
}
}  // namespace detail

template <FlowKeyType Key, CuckooPrefetch Prefetch = CuckooPrefetch::secondary_on_demand,
          CuckooReaders Readers = CuckooReaders::single_thread>
class CuckooTable {
  static constexpr bool kOptimistic = Readers == CuckooReaders::optimistic;

 public:
  using key_type = Key;
  static constexpr std::string_view kName = detail::cuckoo_name(Prefetch, Readers);
  static constexpr Concurrency kConcurrency =
      kOptimistic ? Concurrency::single_writer_many_readers : Concurrency::single_thread;
  static constexpr std::size_t kSlots = 8;

  explicit CuckooTable(std::size_t capacity)
      : buckets_(std::bit_ceil(std::max<std::size_t>((capacity + kSlots - 1) / kSlots, 2))),
        mask_(static_cast<std::uint32_t>(buckets_.size() - 1)),
        keys_(capacity),
        hashes_(capacity),
        ids_(capacity),
        versions_(kOptimistic ? std::min<std::size_t>(buckets_.size(), kMaxStripes) : 0) {}

  FlowId find(const Key& key, std::uint32_t hash) const {
    const std::uint16_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    const std::uint32_t other = alternate(primary, tag);
    if constexpr (kOptimistic) {
      return read_validated(primary, other, [&] { return find_in_pair(primary, other, tag, key); });
    } else {
      return find_in_pair(primary, other, tag, key);
    }
  }

  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    if constexpr (kOptimistic) {
      // Prefetch the whole burst, then validated lookups one by one (each retries on its own).
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::uint32_t primary = hashes[i] & mask_;
        __builtin_prefetch(&buckets_[primary]);
        __builtin_prefetch(&buckets_[alternate(primary, tag_of(hashes[i]))]);
      }
      return find_each(*this, keys, hashes, ids);
    } else {
      return find_bulk_staged(keys, hashes, ids);
    }
  }

  // Brings towards the cache the two buckets a key of this hash lives in or would be inserted into:
  // ahead of an insert() whose key the bulk lookup did not look for (a connection's reply tuple).
  void prefetch(std::uint32_t hash) const {
    const std::uint32_t primary = hash & mask_;
    __builtin_prefetch(&buckets_[primary]);
    __builtin_prefetch(&buckets_[alternate(primary, tag_of(hash))]);
  }

  // The id the nth insert() from now will take if nothing is erased before (0: the next), or kNoFlow;
  // and a prefetch of what an insert writes under an id (its key and hash). Hints, for bringing a
  // creation's writes towards the cache ahead of it; never for deciding.
  FlowId next_id(std::size_t nth) const { return ids_.peek(nth); }
  void prefetch_entry(FlowId id) const {
    __builtin_prefetch(&keys_[id], 1);
    __builtin_prefetch(&hashes_[id], 1);
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    FLOWTRACK_ASSERT(named_ == 0, "a table takes either its own ids or its caller's, never both");
    return insert_as(key, hash, [this] { return ids_.allocate(); });
  }

  // The NamedIdTable contract of flow_table.hpp: the caller's id, the same buckets and key array.
  InsertResult insert_named(const Key& key, std::uint32_t hash, FlowId id) {
    FLOWTRACK_ASSERT(ids_.in_use() == 0, "a table takes either its own ids or its caller's, never both");
    FLOWTRACK_ASSERT(id < keys_.size(), "a caller-named id lies below the capacity");
    const InsertResult result = insert_as(key, hash, [id] { return id; });
    if (result.is_new()) ++named_;
    return result;
  }
  bool erase_named(const Key& key, std::uint32_t hash) {
    if (retire(key, hash) == kNoFlow) return false;
    --named_;
    return true;
  }

  bool erase(const Key& key, std::uint32_t hash) {
    const FlowId id = retire(key, hash);
    if (id == kNoFlow) return false;
    ids_.release(id);
    return true;
  }

  // Removes the key's entry but keeps its id allocated (the RetiringTable contract of flow_table.hpp).
  FlowId retire(const Key& key, std::uint32_t hash) {
    const std::uint16_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    for (const std::uint32_t b : {primary, alternate(primary, tag)}) {
      Bucket& bucket = buckets_[b];
      for (std::uint32_t m = match_mask(bucket, tag); m != 0; m &= m - 1) {
        const auto s = static_cast<std::size_t>(std::countr_zero(m));
        if (keys_[bucket.ids[s]] == key) {
          WriteSection section(*this, b, b);
          store_relaxed(bucket.tags[s], std::uint16_t{0});
          return bucket.ids[s];
        }
      }
    }
    return kNoFlow;
  }

  void reclaim(FlowId id) { ids_.release(id); }
  std::uint32_t stored_hash(FlowId id) const { return hashes_[id]; }

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
  std::size_t size() const { return ids_.in_use() + named_; }
  std::size_t capacity() const { return ids_.capacity(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + buckets_.capacity() * sizeof(Bucket) + keys_.capacity() * sizeof(Key) +
           hashes_.capacity() * sizeof(std::uint32_t) + ids_.memory_bytes() +
           versions_.capacity() * sizeof(std::atomic<std::uint32_t>);
  }

 private:
  struct alignas(64) Bucket {
    std::array<std::uint16_t, kSlots> tags{};  // 0: empty slot
    std::array<FlowId, kSlots> ids{};
  };
  static_assert(sizeof(Bucket) == 64);

  static constexpr std::size_t kMaxStripes = 8192;

  // insert() and insert_named() differ only in where the new entry's id comes from: take_id(), called
  // once the entry has a slot.
  template <class TakeId>
  InsertResult insert_as(const Key& key, std::uint32_t hash, TakeId&& take_id) {
    const std::uint16_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    const std::uint32_t other = alternate(primary, tag);
    // The writer reads its own data without validation: nothing else changes it.
    if (const FlowId found = find_in_pair(primary, other, tag, key); found != kNoFlow) {
      return {found, InsertStatus::existed};
    }
    if (size() == capacity()) return {};
    CuckooSlot place = free_slot(primary);
    if (!place.valid()) place = free_slot(other);
    if (!place.valid()) {
      place = make_room<kSlots>(
          primary, other, [&](std::uint32_t b) { return free_slot(b); },
          [&](std::uint32_t b, std::uint32_t s) { return alternate(b, buckets_[b].tags[s]); },
          [&](CuckooSlot from, CuckooSlot to) { move_entry(from, to); });
    }
    if (!place.valid()) return {};
    const FlowId id = take_id();
    store_key(keys_[id], key);
    hashes_[id] = hash;
    Bucket& bucket = buckets_[place.bucket];
    WriteSection section(*this, place.bucket, place.bucket);
    store_relaxed(bucket.ids[place.slot], id);
    store_relaxed(bucket.tags[place.slot], tag);
    return {id, InsertStatus::inserted};
  }

  // Brackets one writer change to buckets a and b (possibly the same) in optimistic mode: their
  // stripes' versions are odd inside the section, so readers overlapping it retry.
  class WriteSection {
   public:
    WriteSection(const CuckooTable& table, std::uint32_t a, std::uint32_t b) {
      if constexpr (kOptimistic) {
        first_ = &table.version_of(a);
        second_ = &table.version_of(b);
        if (second_ == first_) second_ = nullptr;
        bump(first_);
        bump(second_);
        std::atomic_thread_fence(std::memory_order_release);
      }
    }
    ~WriteSection() {
      if constexpr (kOptimistic) {
        std::atomic_thread_fence(std::memory_order_release);
        bump(first_);
        bump(second_);
      }
    }
    WriteSection(const WriteSection&) = delete;
    WriteSection& operator=(const WriteSection&) = delete;

   private:
    static void bump(std::atomic<std::uint32_t>* version) {
      if (version != nullptr) version->store(version->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    std::atomic<std::uint32_t>* first_ = nullptr;
    std::atomic<std::uint32_t>* second_ = nullptr;
  };

  std::atomic<std::uint32_t>& version_of(std::uint32_t bucket) const {
    return versions_[bucket & (versions_.size() - 1)];
  }

  // Runs `search` until it ran while neither bucket's stripe changed (the seqlock read side).
  template <class Search>
  FlowId read_validated(std::uint32_t a, std::uint32_t b, Search&& search) const {
    const std::atomic<std::uint32_t>& va = version_of(a);
    const std::atomic<std::uint32_t>& vb = version_of(b);
    for (;;) {
      const std::uint32_t before_a = va.load(std::memory_order_acquire);
      const std::uint32_t before_b = vb.load(std::memory_order_acquire);
      if (((before_a | before_b) & 1u) != 0) {
        _mm_pause();
        continue;
      }
      const FlowId id = search();
      std::atomic_thread_fence(std::memory_order_acquire);
      if (va.load(std::memory_order_relaxed) == before_a && vb.load(std::memory_order_relaxed) == before_b) return id;
    }
  }

  std::uint64_t find_bulk_staged(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
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
    __m128i tags;
    if constexpr (kOptimistic) {
      const auto* words = reinterpret_cast<const std::uint64_t*>(bucket.tags.data());
      tags = _mm_set_epi64x(static_cast<long long>(load_relaxed(words[1])), static_cast<long long>(load_relaxed(words[0])));
    } else {
      tags = _mm_load_si128(reinterpret_cast<const __m128i*>(bucket.tags.data()));
    }
    const __m128i equal = _mm_cmpeq_epi16(tags, _mm_set1_epi16(static_cast<short>(tag)));
    // Narrow the 16-bit lanes (0 or -1) to bytes, then one bit per slot.
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(equal, _mm_setzero_si128())));
  }

  static void store_key(Key& to, const Key& key) {
    if constexpr (kOptimistic) {
      store_words_relaxed(to, key);
    } else {
      to = key;
    }
  }

  bool key_equals(FlowId id, const Key& key) const {
    if constexpr (kOptimistic) {
      return load_words_relaxed(keys_[id]) == key;
    } else {
      return keys_[id] == key;
    }
  }

  FlowId first_key_match(const Bucket& bucket, std::uint32_t matches, const Key& key) const {
    for (; matches != 0; matches &= matches - 1) {
      const FlowId id = load_relaxed(bucket.ids[std::countr_zero(matches)]);
      // A racing writer may have left an id that is not yet (or no longer) valid: validation rejects
      // the result then, but the key read must stay inside the array.
      if (kOptimistic && id >= keys_.size()) continue;
      if (key_equals(id, key)) return id;
    }
    return kNoFlow;
  }

  FlowId find_in(std::uint32_t b, std::uint16_t tag, const Key& key) const {
    return first_key_match(buckets_[b], match_mask(buckets_[b], tag), key);
  }

  FlowId find_in_pair(std::uint32_t primary, std::uint32_t other, std::uint16_t tag, const Key& key) const {
    if (const FlowId id = find_in(primary, tag, key); id != kNoFlow) return id;
    return find_in(other, tag, key);
  }

  CuckooSlot free_slot(std::uint32_t b) const {
    const std::uint32_t empty = match_mask(buckets_[b], 0);
    return empty == 0 ? CuckooSlot{} : CuckooSlot{b, static_cast<std::uint32_t>(std::countr_zero(empty))};
  }

  // Copy into the free slot first, then free the source: the key is never absent from both buckets.
  void move_entry(CuckooSlot from, CuckooSlot to) {
    Bucket& source = buckets_[from.bucket];
    Bucket& target = buckets_[to.bucket];
    WriteSection section(*this, from.bucket, to.bucket);
    store_relaxed(target.ids[to.slot], source.ids[from.slot]);
    store_relaxed(target.tags[to.slot], source.tags[from.slot]);
    store_relaxed(source.tags[from.slot], std::uint16_t{0});
  }

  HugePageVector<Bucket> buckets_;
  std::uint32_t mask_;
  HugePageVector<Key> keys_;              // by id
  HugePageVector<std::uint32_t> hashes_;  // by id: scan erases by id
  IdPool ids_;
  std::size_t named_ = 0;  // live caller-named entries (insert_named)
  // Optimistic mode only: one version per stripe of buckets (a power of two, so `& size - 1` picks it).
  mutable std::vector<std::atomic<std::uint32_t>> versions_;
};

}  // namespace flowtrack
