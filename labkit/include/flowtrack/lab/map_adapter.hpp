// One adapter that puts a standard-style hash map behind the FlowTable contract: std::unordered_map
// ("stdmap"), absl::flat_hash_map ("swiss") and tsl::hopscotch_map ("hopscotch") — the anchors every
// design of ours is measured against.
//
// Layout: the map holds (key + caller's hash) -> FlowId; the hash rides along in the key so the map never
// hashes again (its hasher just returns it). Ids come from an IdPool; an id-indexed copy of each key and
// hash lets scan() walk positions = ids, which never move, so a sweep sees every entry exactly once
// whatever the visitor erases. The map is reserved for `capacity` entries at construction and inserts
// beyond capacity are refused, so it never rehashes during a run.
//
// Footprint: everything the map allocates (counted by its allocator) plus the id arrays.
// Concurrency: single thread. find_bulk is a loop of find (these maps have no bulk lookup).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <tsl/hopscotch_map.h>

#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flowtrack/lab/counting_allocator.hpp"
#include "flowtrack/lab/id_key_store.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

template <class Key>
struct HashedKey {
  Key key;
  std::uint32_t hash;
  friend bool operator==(const HashedKey& a, const HashedKey& b) { return a.key == b.key; }
};

struct CarriedHash {
  template <class Key>
  std::size_t operator()(const HashedKey<Key>& k) const { return k.hash; }
};

// Which map an adapter wraps, and its name on the command line.
template <class Key>
struct StdMapKind {
  static constexpr std::string_view kName = "stdmap";
  using Allocator = CountingAllocator<std::pair<const HashedKey<Key>, FlowId>>;
  using Map = std::unordered_map<HashedKey<Key>, FlowId, CarriedHash, std::equal_to<>, Allocator>;
};

template <class Key>
struct SwissKind {
  static constexpr std::string_view kName = "swiss";
  using Allocator = CountingAllocator<std::pair<const HashedKey<Key>, FlowId>>;
  using Map = absl::flat_hash_map<HashedKey<Key>, FlowId, CarriedHash, std::equal_to<>, Allocator>;
};

template <class Key>
struct HopscotchKind {
  static constexpr std::string_view kName = "hopscotch";
  using Allocator = CountingAllocator<std::pair<HashedKey<Key>, FlowId>>;
  using Map = tsl::hopscotch_map<HashedKey<Key>, FlowId, CarriedHash, std::equal_to<>, Allocator>;
};

template <class Key, template <class> class Kind>
class MapAdapter {
  using Map = typename Kind<Key>::Map;

 public:
  using key_type = Key;
  static constexpr std::string_view kName = Kind<Key>::kName;
  static constexpr Concurrency kConcurrency = Concurrency::single_thread;

  explicit MapAdapter(std::size_t capacity)
      : map_bytes_(std::make_unique<std::size_t>(0)),
        map_(0, CarriedHash{}, std::equal_to<>{}, typename Kind<Key>::Allocator(map_bytes_.get())),
        entries_(capacity) {
    map_.reserve(capacity);
  }

  FlowId find(const Key& key, std::uint32_t hash) const {
    const auto it = map_.find(HashedKey<Key>{key, hash});
    return it == map_.end() ? kNoFlow : it->second;
  }

  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    return find_each(*this, keys, hashes, ids);
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    const HashedKey<Key> hashed{key, hash};
    if (const auto it = map_.find(hashed); it != map_.end()) return {it->second, InsertStatus::existed};
    const FlowId id = entries_.allocate();
    if (id == kNoFlow) return {};
    map_.emplace(hashed, id);
    entries_.remember(id, key, hash);
    return {id, InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    const auto it = map_.find(HashedKey<Key>{key, hash});
    if (it == map_.end()) return false;
    entries_.release(it->second);
    map_.erase(it);
    return true;
  }

  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    return entries_.scan(cursor, max_positions, [&](const Key& key, std::uint32_t hash) { erase(key, hash); }, visit);
  }

  std::size_t scan_positions() const { return entries_.capacity(); }
  std::size_t size() const { return map_.size(); }
  std::size_t capacity() const { return entries_.capacity(); }
  std::size_t memory_bytes() const { return sizeof(*this) + *map_bytes_ + entries_.memory_bytes(); }

 private:
  std::unique_ptr<std::size_t> map_bytes_;  // on the heap: the allocator points at it across moves
  Map map_;
  IdKeyStore<Key> entries_;
};

template <class Key>
using StdMapTable = MapAdapter<Key, StdMapKind>;
template <class Key>
using SwissTable = MapAdapter<Key, SwissKind>;
template <class Key>
using HopscotchTable = MapAdapter<Key, HopscotchKind>;

}  // namespace flowtrack
