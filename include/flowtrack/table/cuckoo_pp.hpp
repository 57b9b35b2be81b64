// "cuckoopp": Cuckoo++ ([cuckoopp], compared in [lb-flowtables]), our bucketized cuckoo with two
// additions that save memory traffic in a connection tracker: a filter that spares most lookups the
// second bucket, and per-slot expiry stamps that let the table drop idle flows by itself (lazy
// deletion).
//
// Bucket (one 64-byte line): a 64-bit word holding a Bloom filter (bits 0..55) and a counter (bits
// 56..63), 8 one-byte tags, 8 16-bit expiry stamps, 8 FlowIds. Tags are 8 bits here (16 in "cuckoo") so
// that the stamps fit in the same line: a tag match costs a key compare 1 time in 255, against a second
// cache line per probe otherwise.
//
// Filter: when an entry lives in its alternate bucket, two bits derived from its tag are set in its
// primary bucket's filter, and the primary's counter counts such entries. A lookup that misses in the
// primary reads the alternate only if the filter has both bits of its tag: a miss usually costs one
// cache line, not two. Bloom filters cannot delete, so bits stay set after their entry leaves; when the
// counter falls back to zero, the filter is cleared (a counter that reached 255 sticks, and its filter
// with it, which costs speed, never correctness). Invariant: every entry in its alternate bucket has its
// bits set in its primary's filter. FlowIds never move; pos_[id] says where the entry is and whether
// it lives in its alternate bucket.
//
// Lazy expiry (off until enable_expiry()): each slot holds its entry's deadline in units of 2^shift ns,
// modulo 2^16. The table keeps a clock (set_clock(), once per burst); an entry whose deadline has come
// is expired: find, find_bulk, erase and scan treat it as absent, and insert reuses its slot and its
// FlowId, returning InsertStatus::recycled so that the caller retires the old flow's state first.
// reclaim_expired() sweeps buckets, freeing expired entries and reporting them. Stamps are compared
// with a signed 16-bit difference, right while the true difference stays within +-2^15 units: a deadline
// is never set more than kMaxTimeoutUnits (2^14) ahead, and the sweep must visit every bucket within
// 2^14 units after a deadline passes (LazyAging in aging/ guarantees it), else an expired entry would
// look alive again when the 16-bit stamps wrap.
//
// Footprint: 8 bytes of bucket per slot, plus key + 4-byte position + 4-byte id stack per capacity:
// 35.6 bytes per IPv4 flow at load 0.9, stamp included.
// Concurrency: single thread.
#pragma once

#include <immintrin.h>

#include <array>
#include <bit>
#include <string_view>
#include <utility>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/table/id_pool.hpp"
#include "flowtrack/table/internal/cuckoo_path.hpp"

namespace flowtrack {

template <FlowKeyType Key>
class CuckooPPTable {
 public:
  using key_type = Key;
  static constexpr std::string_view kName = "cuckoopp";
  static constexpr Concurrency kConcurrency = Concurrency::single_thread;
  static constexpr std::size_t kSlots = 8;
  // 2^30 ns (1.07 s) per stamp unit: the longest timeout is then 2^14 units, 4.9 hours.
  static constexpr unsigned kDefaultStampShift = 30;
  static constexpr std::uint64_t kMaxTimeoutUnits = std::uint64_t{1} << 14;

  explicit CuckooPPTable(std::size_t capacity, unsigned stamp_shift = kDefaultStampShift)
      : buckets_(std::bit_ceil(std::max<std::size_t>((capacity + kSlots - 1) / kSlots, 2))),
        mask_(static_cast<std::uint32_t>(buckets_.size() - 1)),
        keys_(capacity),
        pos_(capacity),
        ids_(capacity),
        shift_(stamp_shift) {}

  FlowId find(const Key& key, std::uint32_t hash) const {
    const CuckooSlot at = locate(key, hash);
    return at.valid() ? buckets_[at.bucket].ids[at.slot] : kNoFlow;
  }

  // Stages over the burst: prefetch primaries; match tags and prefetch the matching keys and, where the
  // filter says so, the alternate buckets; compare keys; search the alternates still needed.
  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    const std::size_t n = keys.size();
    std::array<std::uint32_t, kMaxBulk> primary;
    std::array<std::uint8_t, kMaxBulk> tags;
    std::array<std::uint32_t, kMaxBulk> matches;
    for (std::size_t i = 0; i < n; ++i) {
      tags[i] = tag_of(hashes[i]);
      primary[i] = hashes[i] & mask_;
      __builtin_prefetch(&buckets_[primary[i]]);
    }
    std::uint64_t may_be_displaced = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Bucket& bucket = buckets_[primary[i]];
      matches[i] = live_matches(bucket, tags[i]);
      if (matches[i] != 0) __builtin_prefetch(&keys_[bucket.ids[std::countr_zero(matches[i])]]);
      if (filter_has(bucket, tags[i])) {
        may_be_displaced |= std::uint64_t{1} << i;
        __builtin_prefetch(&buckets_[alternate(primary[i], tags[i])]);
      }
    }
    std::uint64_t hits = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const CuckooSlot at = first_key_match(primary[i], matches[i], keys[i]);
      ids[i] = at.valid() ? buckets_[at.bucket].ids[at.slot] : kNoFlow;
      if (at.valid()) {
        hits |= std::uint64_t{1} << i;
        may_be_displaced &= ~(std::uint64_t{1} << i);
      }
    }
    for (; may_be_displaced != 0; may_be_displaced &= may_be_displaced - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(may_be_displaced));
      const std::uint32_t other = alternate(primary[i], tags[i]);
      const CuckooSlot at = first_key_match(other, live_matches(buckets_[other], tags[i]), keys[i]);
      if (at.valid()) {
        ids[i] = buckets_[at.bucket].ids[at.slot];
        hits |= std::uint64_t{1} << i;
      }
    }
    return hits;
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    if (const CuckooSlot at = locate(key, hash); at.valid()) {
      return {buckets_[at.bucket].ids[at.slot], InsertStatus::existed};
    }
    const std::uint8_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    const std::uint32_t other = alternate(primary, tag);
    const bool id_free = ids_.in_use() < ids_.capacity();
    // Prefer the primary bucket (a free slot, else an expired one), then the alternate, then displace.
    for (const std::uint32_t b : {primary, other}) {
      if (id_free) {
        if (const CuckooSlot free = free_slot(b); free.valid()) return place(free, ids_.allocate(), key, tag, primary, InsertStatus::inserted);
      }
      if (const CuckooSlot expired = expired_slot(b); expired.valid()) {
        const FlowId id = buckets_[b].ids[expired.slot];
        clear_slot(expired);
        return place(expired, id, key, tag, primary, InsertStatus::recycled);
      }
    }
    if (!id_free) return {};
    const CuckooSlot room = make_room<kSlots>(
        primary, other, [&](std::uint32_t b) { return free_slot(b); },
        [&](std::uint32_t b, std::uint32_t s) { return alternate(b, buckets_[b].tags[s]); },
        [&](CuckooSlot from, CuckooSlot to) { move_entry(from, to); });
    if (!room.valid()) return {};
    return place(room, ids_.allocate(), key, tag, primary, InsertStatus::inserted);
  }

  bool erase(const Key& key, std::uint32_t hash) {
    const CuckooSlot at = locate(key, hash);
    if (!at.valid()) return false;
    ids_.release(buckets_[at.bucket].ids[at.slot]);
    clear_slot(at);
    return true;
  }

  // Positions are FlowIds, which never move; expired entries are not shown.
  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::size_t visited = 0;
    const std::size_t end = std::min(cursor + max_positions, capacity());
    for (; cursor < end; ++cursor) {
      const auto id = static_cast<FlowId>(cursor);
      if (!ids_.is_live(id)) continue;
      const CuckooSlot at = slot_of(id);
      if (!alive(buckets_[at.bucket], at.slot)) continue;
      ++visited;
      if (visit(keys_[id], id) == ScanAction::erase) {
        ids_.release(id);
        clear_slot(at);
      }
    }
    if (cursor == capacity()) cursor = 0;
    return visited;
  }

  // --- Lazy expiry ---------------------------------------------------------------------------------

  // From now on entries expire. Every entry present, and every entry inserted later, gets the longest
  // deadline until set_deadline() gives it its own.
  void enable_expiry(std::uint64_t now_ns) {
    expiring_ = true;
    set_clock(now_ns);
    for (Bucket& bucket : buckets_) bucket.stamps.fill(latest_stamp());
  }

  // The table's notion of now; it must never go back.
  void set_clock(std::uint64_t now_ns) { now_units_ = now_ns >> shift_; }

  // Deadlines are rounded up to a whole unit (never early) and capped at max_timeout() from now.
  void set_deadline(FlowId id, std::uint64_t deadline_ns) {
    const std::uint64_t units = std::min((deadline_ns >> shift_) + ((deadline_ns & (unit_ns() - 1)) != 0),
                                         now_units_ + kMaxTimeoutUnits);
    const CuckooSlot at = slot_of(id);
    buckets_[at.bucket].stamps[at.slot] = static_cast<std::uint16_t>(units);
  }

  std::uint64_t unit_ns() const { return std::uint64_t{1} << shift_; }
  std::uint64_t max_timeout_ns() const { return (kMaxTimeoutUnits - 1) << shift_; }

  // Examines up to `buckets` buckets from `cursor` on (wrapping), freeing their expired entries and
  // calling on_expire(id) for each after it has left the table, until `max_reclaimed` entries are freed;
  // the cursor stops on a bucket not yet finished. Returns {buckets finished, entries freed}.
  template <class OnExpire>
  std::pair<std::size_t, std::size_t> reclaim_expired(std::size_t& cursor, std::size_t buckets,
                                                      std::size_t max_reclaimed, OnExpire&& on_expire) {
    std::size_t reclaimed = 0;
    std::size_t finished = 0;
    for (; finished < buckets; ++finished) {
      const auto b = static_cast<std::uint32_t>(cursor);
      for (std::uint32_t m = occupied(buckets_[b]) & ~alive_mask(buckets_[b]); m != 0; m &= m - 1) {
        if (reclaimed == max_reclaimed) return {finished, reclaimed};
        const CuckooSlot at{b, static_cast<std::uint32_t>(std::countr_zero(m))};
        const FlowId id = buckets_[b].ids[at.slot];
        ids_.release(id);
        clear_slot(at);
        ++reclaimed;
        on_expire(id);
      }
      cursor = (cursor + 1) & mask_;
    }
    return {finished, reclaimed};
  }

  // Entries stored in their alternate bucket.
  std::size_t secondary_count() const {
    std::size_t count = 0;
    for (std::size_t id = 0; id < capacity(); ++id) {
      if (ids_.is_live(static_cast<FlowId>(id)) && (pos_[id] & kDisplacedBit) != 0) ++count;
    }
    return count;
  }

  std::size_t bucket_count() const { return buckets_.size(); }
  std::size_t scan_positions() const { return ids_.capacity(); }
  // Counts expired entries not yet reclaimed.
  std::size_t size() const { return ids_.in_use(); }
  std::size_t capacity() const { return ids_.capacity(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + buckets_.capacity() * sizeof(Bucket) + keys_.capacity() * sizeof(Key) +
           pos_.capacity() * sizeof(std::uint32_t) + ids_.memory_bytes();
  }

 private:
  struct alignas(64) Bucket {
    std::uint64_t filter = 0;  // bits 0..55: Bloom filter of displaced tags; bits 56..63: their count
    std::array<std::uint8_t, kSlots> tags{};  // 0: empty slot
    std::array<std::uint16_t, kSlots> stamps{};
    std::array<FlowId, kSlots> ids{};
  };
  static_assert(sizeof(Bucket) == 64);

  static constexpr std::uint64_t kFilterBits = 56;
  static constexpr std::uint64_t kFilterMask = (std::uint64_t{1} << kFilterBits) - 1;
  static constexpr std::uint64_t kCountOne = std::uint64_t{1} << kFilterBits;
  static constexpr std::uint64_t kCountSaturated = 255;
  // pos_[id]: bucket * 8 + slot, and this bit when the entry lives in its alternate bucket.
  static constexpr std::uint32_t kDisplacedBit = 1u << 31;

  // 8 bits of a multiplicative remix of the hash (independent of the low bits that pick the bucket),
  // never 0 (0 marks an empty slot).
  static std::uint8_t tag_of(std::uint32_t hash) {
    const auto tag = static_cast<std::uint8_t>((hash * 0x9E3779B1u) >> 24);
    return tag == 0 ? 1 : tag;
  }

  std::uint32_t alternate(std::uint32_t bucket, std::uint8_t tag) const {
    return (bucket ^ (tag * 0x5bd1e995u)) & mask_;
  }

  // Two filter bits per tag, from a remix of the tag, tabulated once (2 KiB, stays in L1).
  static constexpr std::array<std::uint64_t, 256> kFilterBitsOfTag = [] {
    std::array<std::uint64_t, 256> bits{};
    for (std::uint32_t tag = 0; tag < 256; ++tag) {
      const std::uint32_t mixed = tag * 0x9E37u;
      bits[tag] = (std::uint64_t{1} << ((mixed >> 2) % kFilterBits)) | (std::uint64_t{1} << ((mixed >> 9) % kFilterBits));
    }
    return bits;
  }();
  static std::uint64_t filter_bits(std::uint8_t tag) { return kFilterBitsOfTag[tag]; }

  static bool filter_has(const Bucket& bucket, std::uint8_t tag) {
    const std::uint64_t bits = filter_bits(tag);
    return (bucket.filter & bits) == bits;
  }

  static void add_displaced(Bucket& home, std::uint8_t tag) {
    const std::uint64_t count = home.filter >> kFilterBits;
    home.filter |= filter_bits(tag);
    if (count < kCountSaturated) home.filter += kCountOne;
  }

  static void remove_displaced(Bucket& home) {
    const std::uint64_t count = home.filter >> kFilterBits;
    if (count == kCountSaturated) return;
    home.filter -= kCountOne;
    if (count == 1) home.filter = 0;
  }

  std::uint16_t latest_stamp() const { return static_cast<std::uint16_t>(now_units_ + kMaxTimeoutUnits); }

  // Bit s set when slot s is in use (expired or not).
  static std::uint32_t occupied(const Bucket& bucket) { return tag_matches(bucket, 0) ^ 0xffu; }

  static std::uint32_t tag_matches(const Bucket& bucket, std::uint8_t tag) {
    const __m128i tags = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bucket.tags.data()));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(tags, _mm_set1_epi8(static_cast<char>(tag))))) & 0xffu;
  }

  // Bit s set when slot s's deadline is still ahead of the clock (every bit when expiry is off).
  std::uint32_t alive_mask(const Bucket& bucket) const {
    if (!expiring_) return 0xffu;
    const __m128i stamps = _mm_load_si128(reinterpret_cast<const __m128i*>(bucket.stamps.data()));
    const __m128i ahead = _mm_sub_epi16(stamps, _mm_set1_epi16(static_cast<short>(now_units_)));
    const __m128i alive = _mm_cmpgt_epi16(ahead, _mm_setzero_si128());
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(alive, _mm_setzero_si128())));
  }

  bool alive(const Bucket& bucket, std::uint32_t slot) const { return ((alive_mask(bucket) >> slot) & 1u) != 0; }

  std::uint32_t live_matches(const Bucket& bucket, std::uint8_t tag) const {
    return tag_matches(bucket, tag) & alive_mask(bucket);
  }

  CuckooSlot first_key_match(std::uint32_t b, std::uint32_t matches, const Key& key) const {
    for (; matches != 0; matches &= matches - 1) {
      const auto s = static_cast<std::uint32_t>(std::countr_zero(matches));
      if (keys_[buckets_[b].ids[s]] == key) return {b, s};
    }
    return {};
  }

  // Where the live entry for key is, or an invalid slot.
  CuckooSlot locate(const Key& key, std::uint32_t hash) const {
    const std::uint8_t tag = tag_of(hash);
    const std::uint32_t primary = hash & mask_;
    const Bucket& home = buckets_[primary];
    if (const CuckooSlot at = first_key_match(primary, live_matches(home, tag), key); at.valid()) return at;
    if (!filter_has(home, tag)) return {};
    const std::uint32_t other = alternate(primary, tag);
    return first_key_match(other, live_matches(buckets_[other], tag), key);
  }

  CuckooSlot free_slot(std::uint32_t b) const {
    const std::uint32_t empty = tag_matches(buckets_[b], 0);
    return empty == 0 ? CuckooSlot{} : CuckooSlot{b, static_cast<std::uint32_t>(std::countr_zero(empty))};
  }

  CuckooSlot expired_slot(std::uint32_t b) const {
    const std::uint32_t expired = occupied(buckets_[b]) & ~alive_mask(buckets_[b]);
    return expired == 0 ? CuckooSlot{} : CuckooSlot{b, static_cast<std::uint32_t>(std::countr_zero(expired))};
  }

  CuckooSlot slot_of(FlowId id) const {
    const std::uint32_t position = pos_[id] & ~kDisplacedBit;
    return {position / std::uint32_t{kSlots}, position % std::uint32_t{kSlots}};
  }

  void set_position(FlowId id, CuckooSlot at, bool displaced) {
    pos_[id] = static_cast<std::uint32_t>(at.bucket * kSlots + at.slot) | (displaced ? kDisplacedBit : 0u);
  }

  InsertResult place(CuckooSlot at, FlowId id, const Key& key, std::uint8_t tag, std::uint32_t primary,
                     InsertStatus status) {
    Bucket& bucket = buckets_[at.bucket];
    keys_[id] = key;
    bucket.tags[at.slot] = tag;
    bucket.ids[at.slot] = id;
    bucket.stamps[at.slot] = latest_stamp();
    const bool displaced = at.bucket != primary;
    if (displaced) add_displaced(buckets_[primary], tag);
    set_position(id, at, displaced);
    return {id, status};
  }

  // Empties a slot, keeping the filter's counter right; the caller handles the FlowId.
  void clear_slot(CuckooSlot at) {
    Bucket& bucket = buckets_[at.bucket];
    const FlowId id = bucket.ids[at.slot];
    if ((pos_[id] & kDisplacedBit) != 0) remove_displaced(buckets_[alternate(at.bucket, bucket.tags[at.slot])]);
    bucket.tags[at.slot] = 0;
  }

  // A displacement moves an entry to its other bucket: from primary to alternate or back.
  void move_entry(CuckooSlot from, CuckooSlot to) {
    Bucket& source = buckets_[from.bucket];
    Bucket& target = buckets_[to.bucket];
    const FlowId id = source.ids[from.slot];
    const std::uint8_t tag = source.tags[from.slot];
    target.ids[to.slot] = id;
    target.tags[to.slot] = tag;
    target.stamps[to.slot] = source.stamps[from.slot];
    source.tags[from.slot] = 0;
    const bool was_displaced = (pos_[id] & kDisplacedBit) != 0;
    if (was_displaced) {
      remove_displaced(target);  // back home
    } else {
      add_displaced(source, tag);  // source is its primary
    }
    set_position(id, to, !was_displaced);
  }

  std::vector<Bucket> buckets_;
  std::uint32_t mask_;
  std::vector<Key> keys_;            // by id
  std::vector<std::uint32_t> pos_;   // by id: where the entry is (valid while the id is live)
  IdPool ids_;
  unsigned shift_;
  std::uint64_t now_units_ = 0;
  bool expiring_ = false;
};

}  // namespace flowtrack
