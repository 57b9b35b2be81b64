// The dense FlowId allocator behind the tables that do not derive ids from their own layout.
//
// Ids live in [0, capacity). Free ids sit on a stack (LIFO: the id freed last is reused first, so the
// state it indexes is likely still in cache). All memory is allocated at construction.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/table/flow_table.hpp"

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

  void release(FlowId id) {
    live_[id] = false;
    free_.push_back(id);
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
