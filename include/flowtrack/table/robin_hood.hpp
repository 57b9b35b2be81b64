// "robinhood": our robin hood hashing (linear probing where an entry far from its home slot takes the
// place of one nearer to its own), with backward-shift deletion and no tombstones.
//
// Layout: `slots` = capacity / max_load slots of 8 bytes {hash, id}, a FlowId-indexed key array, and an
// IdPool. The home of a hash is (hash * slots) >> 32, so any slot count works and the table wraps at
// its end. An entry's distance from its home is derived from its stored hash, so it is not stored.
// Invariant (what makes early exit and backward shift correct): along any run of occupied slots, homes
// never decrease (cyclically) — equivalently, a lookup may stop at the first slot whose entry is nearer
// to its home than the key would be.
//
// Ids live in the key array and never move; slots move on insert and erase. scan() visits entries by
// their home slot (each entry has exactly one), so a sweep sees each entry once even though erasing
// shifts later entries back and entries wrap around the table end.
//
// Cost: a lookup reads consecutive 8-byte slots (8 per cache line) from the home, then the key of each
// slot whose full hash matches. Footprint: 8 B per slot + key + 4 B id stack per capacity.
// Concurrency: single thread.
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/table/id_pool.hpp"

namespace flowtrack {

template <FlowKeyType Key>
class RobinHoodTable {
 public:
  using key_type = Key;
  static constexpr std::string_view kName = "robinhood";
  static constexpr Concurrency kConcurrency = Concurrency::single_thread;
  static constexpr double kDefaultMaxLoad = 0.95;

  explicit RobinHoodTable(std::size_t capacity, double max_load = kDefaultMaxLoad)
      // At least one slot more than entries: an empty slot always ends a probe.
      : slots_(std::max<std::size_t>(static_cast<std::size_t>(std::ceil(capacity / max_load)), capacity + 1),
               Slot{0, kNoFlow}),
        keys_(capacity),
        ids_(capacity) {}

  FlowId find(const Key& key, std::uint32_t hash) const {
    const std::size_t pos = locate(key, hash);
    return pos == kNowhere ? kNoFlow : slots_[pos].id;
  }

  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    for (std::size_t i = 0; i < keys.size(); ++i) __builtin_prefetch(&slots_[home(hashes[i])]);
    return find_each(*this, keys, hashes, ids);
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    if (const FlowId found = find(key, hash); found != kNoFlow) return {found, InsertStatus::existed};
    const FlowId id = ids_.allocate();
    if (id == kNoFlow) return {};
    keys_[id] = key;
    // Carry the new entry forward; whenever the resident is nearer its home than the carried entry is,
    // they swap and the resident is carried on.
    Slot carried{hash, id};
    std::size_t pos = home(hash);
    std::size_t carried_distance = 0;
    for (;;) {
      Slot& slot = slots_[pos];
      if (slot.id == kNoFlow) {
        slot = carried;
        break;
      }
      const std::size_t resident_distance = distance(pos, slot.hash);
      if (resident_distance < carried_distance) {
        std::swap(slot, carried);
        carried_distance = resident_distance;
      }
      pos = next(pos);
      ++carried_distance;
    }
    ++size_;
    return {id, InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    const std::size_t pos = locate(key, hash);
    if (pos == kNowhere) return false;
    erase_at(pos);
    return true;
  }

  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::size_t visited = 0;
    const std::size_t end = std::min(cursor + max_positions, slots_.size());
    for (; cursor < end; ++cursor) {
      // The entries whose home is `cursor` sit in one run starting at or after it: skip the entries of
      // earlier homes, then take those of this home; an erase shifts the next one into the same slot.
      std::size_t pos = cursor;
      std::size_t offset = 0;
      while (slots_[pos].id != kNoFlow && distance(pos, slots_[pos].hash) > offset) {
        pos = next(pos);
        ++offset;
      }
      while (slots_[pos].id != kNoFlow && distance(pos, slots_[pos].hash) == offset) {
        const FlowId id = slots_[pos].id;
        ++visited;
        if (visit(keys_[id], id) == ScanAction::erase) {
          erase_at(pos);
        } else {
          pos = next(pos);
          ++offset;
        }
      }
    }
    if (cursor == slots_.size()) cursor = 0;
    return visited;
  }

  std::size_t scan_positions() const { return slots_.size(); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return ids_.capacity(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + slots_.capacity() * sizeof(Slot) + keys_.capacity() * sizeof(Key) + ids_.memory_bytes();
  }

 private:
  static constexpr std::size_t kNowhere = ~std::size_t{0};

  struct Slot {
    std::uint32_t hash;
    FlowId id;  // kNoFlow: empty
  };

  std::size_t home(std::uint32_t hash) const { return (std::uint64_t{hash} * slots_.size()) >> 32; }
  std::size_t next(std::size_t pos) const { return pos + 1 == slots_.size() ? 0 : pos + 1; }
  std::size_t distance(std::size_t pos, std::uint32_t hash) const {
    const std::size_t h = home(hash);
    return pos >= h ? pos - h : pos + slots_.size() - h;
  }

  std::size_t locate(const Key& key, std::uint32_t hash) const {
    std::size_t pos = home(hash);
    for (std::size_t d = 0;; ++d, pos = next(pos)) {
      const Slot& slot = slots_[pos];
      if (slot.id == kNoFlow || distance(pos, slot.hash) < d) return kNowhere;
      if (slot.hash == hash && keys_[slot.id] == key) return pos;
    }
  }

  // Removes the entry at `pos` and shifts the following displaced entries back by one.
  void erase_at(std::size_t pos) {
    ids_.release(slots_[pos].id);
    for (std::size_t following = next(pos);
         slots_[following].id != kNoFlow && distance(following, slots_[following].hash) > 0;
         following = next(following)) {
      slots_[pos] = slots_[following];
      pos = following;
    }
    slots_[pos] = Slot{0, kNoFlow};
    --size_;
  }

  std::vector<Slot> slots_;
  std::vector<Key> keys_;  // by id
  IdPool ids_;
  std::size_t size_ = 0;
};

}  // namespace flowtrack
