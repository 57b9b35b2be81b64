// "libcuckoo": adapter over libcuckoo's cuckoohash_map (the concurrent cuckoo table of MemC3 and the
// EuroSys'14 paper), the anchor for the shared, many-writer designs of the multi-core layer.
//
// Layout: the map holds (key + caller's hash) -> FlowId, reserved for `capacity` entries with its
// maximum hashpower pinned to the reserved one, so it never resizes: a full cuckoo path is a refused
// insert, not a rehash. Ids come from an IdPool behind a mutex (held only to take or return an id);
// id-indexed key and hash arrays serve scan().
//
// Concurrency: find, find_bulk, insert and erase may run on any thread at any time (libcuckoo's striped
// locks). scan() must not run concurrently with writers (it reads the id arrays unlocked).
// Footprint: what the map allocated (counted) plus the id arrays.
#pragma once

#include <libcuckoo/cuckoohash_map.hh>

#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "flowtrack/lab/counting_allocator.hpp"
#include "flowtrack/lab/id_key_store.hpp"
#include "flowtrack/lab/map_adapter.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

template <FlowKeyType Key>
class LibcuckooTable {
  using Allocator = CountingAllocator<std::pair<const HashedKey<Key>, FlowId>>;
  using Map = libcuckoo::cuckoohash_map<HashedKey<Key>, FlowId, CarriedHash, std::equal_to<>, Allocator>;

 public:
  using key_type = Key;
  static constexpr std::string_view kName = "libcuckoo";
  static constexpr Concurrency kConcurrency = Concurrency::many_writers;

  explicit LibcuckooTable(std::size_t capacity)
      : map_bytes_(std::make_unique<std::size_t>(0)),
        map_(std::make_unique<Map>(capacity, CarriedHash{}, std::equal_to<>{}, Allocator(map_bytes_.get()))),
        entries_(capacity) {
    map_->maximum_hashpower(map_->hashpower());
  }

  FlowId find(const Key& key, std::uint32_t hash) const {
    FlowId id = kNoFlow;
    map_->find(HashedKey<Key>{key, hash}, id);
    return id;
  }

  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    return find_each(*this, keys, hashes, ids);
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    const HashedKey<Key> hashed{key, hash};
    if (FlowId existing = kNoFlow; map_->find(hashed, existing)) return {existing, InsertStatus::existed};
    const FlowId id = take_id();
    if (id == kNoFlow) return {};
    entries_.remember(id, key, hash);
    bool inserted = false;
    try {
      inserted = map_->insert(hashed, id);
    } catch (const libcuckoo::maximum_hashpower_exceeded&) {
      // No cuckoo path, and growth is off: the table is full for this key.
      return_id(id);
      return {};
    }
    if (!inserted) {
      // Another thread inserted the same key between our find and insert: theirs stands.
      return_id(id);
      FlowId winner = kNoFlow;
      map_->find(hashed, winner);
      return {winner, winner == kNoFlow ? InsertStatus::full : InsertStatus::existed};
    }
    return {id, InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    FlowId id = kNoFlow;
    const bool erased = map_->erase_fn(HashedKey<Key>{key, hash}, [&](FlowId& value) {
      id = value;
      return true;
    });
    if (erased) return_id(id);
    return erased;
  }

  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    return entries_.scan(cursor, max_positions, [&](const Key& key, std::uint32_t hash) { erase(key, hash); }, visit);
  }

  std::size_t scan_positions() const { return entries_.capacity(); }
  std::size_t size() const { return map_->size(); }
  std::size_t capacity() const { return entries_.capacity(); }
  std::size_t memory_bytes() const { return sizeof(*this) + *map_bytes_ + entries_.memory_bytes(); }

 private:
  FlowId take_id() {
    std::lock_guard lock(ids_mutex_);
    return entries_.allocate();
  }
  void return_id(FlowId id) {
    std::lock_guard lock(ids_mutex_);
    entries_.release(id);
  }

  std::unique_ptr<std::size_t> map_bytes_;  // on the heap: the allocator points at it across moves
  std::unique_ptr<Map> map_;
  std::mutex ids_mutex_;  // guards the id pool inside entries_
  IdKeyStore<Key> entries_;
};

}  // namespace flowtrack
