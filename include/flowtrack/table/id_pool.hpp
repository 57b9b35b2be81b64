// The dense FlowId allocator behind the tables that do not derive ids from their own layout.
//
// Ids live in [0, capacity). Free ids sit on a stack (LIFO: the id freed last is reused first, so the
// state it indexes is likely still in cache). All memory is allocated at construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {

class IdPool {
 public:
  explicit IdPool(std::size_t capacity) : free_(capacity), live_(capacity, false) {
    // Hand out 0, 1, 2, ... first: the top of the stack is the back of the vector.
    for (std::size_t i = 0; i < capacity; ++i) free_[i] = static_cast<FlowId>(capacity - 1 - i);
  }

  // kNoFlow when every id is in use.
  FlowId allocate() {
    if (free_.empty()) return kNoFlow;
    const FlowId id = free_.back();
    free_.pop_back();
    live_[id] = true;
    return id;
  }

  // The id the nth allocate() from now will return (0: the next one) if none is released before, or
  // kNoFlow: for prefetching what that id indexes ahead of the allocation, never for deciding.
  FlowId peek(std::size_t nth) const { return nth < free_.size() ? free_[free_.size() - 1 - nth] : kNoFlow; }

  // id must be live: releasing it twice would hand it out twice and push past the reserved stack.
  void release(FlowId id) {
    FLOWTRACK_ASSERT(is_live(id), "IdPool::release of an id that is not in use");
    live_[id] = false;
    free_.push_back(id);
  }

  // The scan of a table whose scan positions are its ids (which never move, so a sweep sees each entry
  // once whatever is inserted or erased meanwhile): visits live ids in [cursor, cursor + max_positions)
  // as visit(key_of(id), id) and calls erase_id(id) when the visitor says so; wraps cursor to 0 at the end.
  template <class KeyOf, class EraseId, class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, KeyOf&& key_of, EraseId&& erase_id, Visit&& visit) {
    std::size_t visited = 0;
    const std::size_t end = std::min(cursor + max_positions, capacity());
    for (; cursor < end; ++cursor) {
      const auto id = static_cast<FlowId>(cursor);
      if (!is_live(id)) continue;
      ++visited;
      if (visit(key_of(id), id) == ScanAction::erase) erase_id(id);
    }
    if (cursor == capacity()) cursor = 0;
    return visited;
  }

  bool is_live(FlowId id) const { return id < live_.size() && live_[id]; }
  std::size_t capacity() const { return live_.size(); }
  std::size_t in_use() const { return live_.size() - free_.size(); }
  std::size_t memory_bytes() const { return free_.capacity() * sizeof(FlowId) + live_.capacity() / 8; }

 private:
  std::vector<FlowId> free_;  // reserved to capacity at construction: push_back never reallocates
  std::vector<bool> live_;
};

}  // namespace flowtrack
