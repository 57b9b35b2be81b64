// What the adapters over other libraries keep beside the library's map: the id allocator, and each live
// entry's key and hash by FlowId, so that scan() can walk ids (which never move) and erase through the
// map. Footprint: key + 4-byte hash + the id pool's share per capacity.
#pragma once

#include <vector>

#include "flowtrack/table/id_pool.hpp"

namespace flowtrack {

template <FlowKeyType Key>
class IdKeyStore {
 public:
  explicit IdKeyStore(std::size_t capacity) : ids_(capacity), keys_(capacity), hashes_(capacity) {}

  // kNoFlow when every id is in use; the caller then records the key with remember().
  FlowId allocate() { return ids_.allocate(); }
  void release(FlowId id) { ids_.release(id); }
  void remember(FlowId id, const Key& key, std::uint32_t hash) {
    keys_[id] = key;
    hashes_[id] = hash;
  }

  // The FlowTable scan over ids; erase(key, hash) removes an entry the visitor gave up.
  template <class Erase, class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Erase&& erase, Visit&& visit) {
    return ids_.scan(
        cursor, max_positions, [&](FlowId id) -> const Key& { return keys_[id]; },
        [&](FlowId id) { erase(keys_[id], hashes_[id]); }, visit);
  }

  std::size_t capacity() const { return ids_.capacity(); }
  std::size_t memory_bytes() const {
    return ids_.memory_bytes() + keys_.capacity() * sizeof(Key) + hashes_.capacity() * sizeof(std::uint32_t);
  }

 private:
  IdPool ids_;
  std::vector<Key> keys_;
  std::vector<std::uint32_t> hashes_;
};

}  // namespace flowtrack
