// "chained": FastClick-style separate chaining, the baseline of seed 002.
//
// Layout: a power-of-two array of bucket heads (one per expected entry, so the mean chain is at most 1)
// and a preallocated pool of `capacity` nodes {key, hash, next}. A node's index in the pool is its FlowId
// (ids never move: chaining never relocates entries). New entries go to the head of their bucket's chain.
// Free nodes form an intrusive list through `next`, so there is no allocation after construction.
//
// Cost: a lookup touches the head array and then one node per chain link; the full hash is compared
// before the key. Footprint: 4 bytes per bucket + one node (key + 8 bytes) per capacity.
// Concurrency: single thread (the striped scaling strategy wraps it with per-bucket locks).
#pragma once

#include <bit>
#include <string_view>
#include <vector>

#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

template <FlowKeyType Key>
class ChainedTable {
 public:
  using key_type = Key;
  static constexpr std::string_view kName = "chained";
  static constexpr Concurrency kConcurrency = Concurrency::single_thread;

  explicit ChainedTable(std::size_t capacity)
      : heads_(std::bit_ceil(std::max<std::size_t>(capacity, 1)), kEnd),
        mask_(static_cast<std::uint32_t>(heads_.size() - 1)),
        nodes_(capacity) {
    for (std::size_t i = 0; i < capacity; ++i) nodes_[i].next = i + 1 < capacity ? static_cast<FlowId>(i + 1) : kEnd;
    free_head_ = capacity > 0 ? 0 : kEnd;
  }

  FlowId find(const Key& key, std::uint32_t hash) const {
    for (FlowId i = heads_[hash & mask_]; i != kEnd; i = nodes_[i].next) {
      if (nodes_[i].hash == hash && nodes_[i].key == key) return i;
    }
    return kNoFlow;
  }

  // Prefetches every head of the burst, then every first node, then walks the chains.
  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    const std::size_t n = keys.size();
    for (std::size_t i = 0; i < n; ++i) __builtin_prefetch(&heads_[hashes[i] & mask_]);
    for (std::size_t i = 0; i < n; ++i) {
      const FlowId head = heads_[hashes[i] & mask_];
      if (head != kEnd) __builtin_prefetch(&nodes_[head]);
    }
    return find_each(*this, keys, hashes, ids);
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    if (const FlowId found = find(key, hash); found != kNoFlow) return {found, InsertStatus::existed};
    if (free_head_ == kEnd) return {};
    const FlowId id = free_head_;
    free_head_ = nodes_[id].next;
    FlowId& head = heads_[hash & mask_];
    nodes_[id] = {key, hash, head};
    head = id;
    ++size_;
    return {id, InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    for (FlowId* link = &heads_[hash & mask_]; *link != kEnd; link = &nodes_[*link].next) {
      const FlowId i = *link;
      if (nodes_[i].hash == hash && nodes_[i].key == key) {
        unlink(link);
        return true;
      }
    }
    return false;
  }

  // Positions are buckets; a visitor may erase the node it is shown (the walk keeps the link to it).
  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::size_t visited = 0;
    const std::size_t end = std::min(cursor + max_positions, heads_.size());
    for (; cursor < end; ++cursor) {
      FlowId* link = &heads_[cursor];
      while (*link != kEnd) {
        const FlowId i = *link;
        ++visited;
        if (visit(nodes_[i].key, i) == ScanAction::erase) {
          unlink(link);
        } else {
          link = &nodes_[i].next;
        }
      }
    }
    if (cursor == heads_.size()) cursor = 0;
    return visited;
  }

  std::size_t scan_positions() const { return heads_.size(); }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return nodes_.size(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + heads_.capacity() * sizeof(FlowId) + nodes_.capacity() * sizeof(Node);
  }

 private:
  static constexpr FlowId kEnd = kNoFlow;

  struct Node {
    Key key;
    std::uint32_t hash;
    FlowId next;  // next node of the chain, or of the free list
  };

  // Removes the node `*link` points at and returns it to the free list.
  void unlink(FlowId* link) {
    const FlowId i = *link;
    *link = nodes_[i].next;
    nodes_[i].next = free_head_;
    free_head_ = i;
    --size_;
  }

  std::vector<FlowId> heads_;
  std::uint32_t mask_;
  std::vector<Node> nodes_;
  FlowId free_head_;
  std::size_t size_ = 0;
};

}  // namespace flowtrack
