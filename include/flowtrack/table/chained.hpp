// "chained": FastClick-style separate chaining, the baseline of [conntrack-study]; and "chained-striped", the
// same table with per-bucket locks ([conntrack-study]'s "hierarchical" locking), shared by many writers.
//
// Layout: a power-of-two array of bucket heads (one per expected entry, so the mean chain is at most 1)
// and a preallocated pool of `capacity` nodes {key, hash, next}. A node's index in the pool is its FlowId
// (ids never move: chaining never relocates entries). New entries go to the head of their bucket's chain.
// Free nodes form an intrusive list through `next`, so there is no allocation after construction.
//
// Cost: a lookup touches the head array and then one node per chain link; the full hash is compared
// before the key. Footprint: 4 bytes per bucket + one node (key + 8 bytes) per capacity.
//
// Locking chooses the concurrency contract:
//  - none: single thread.
//  - striped: every call may run on any thread. Bucket b is guarded by lock b mod the number of stripes
//    (one stripe per bucket up to kMaxStripes); the node pool's free list by one pool lock. A call
//    holds its bucket's lock for the whole chain walk and takes the pool lock inside it to take or
//    return a node, always in that order, so there is no deadlock. A node is on exactly one chain or
//    on the free list, and each is touched only under its lock, so a walk never meets a node that is
//    being recycled.
#pragma once

#include <algorithm>
#include <bit>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/util/spinlock.hpp"

namespace flowtrack {

enum class ChainLocking : std::uint8_t { none, striped };

template <FlowKeyType Key, ChainLocking Locking = ChainLocking::none>
class ChainedTable {
  static constexpr bool kStriped = Locking == ChainLocking::striped;

 public:
  using key_type = Key;
  static constexpr std::string_view kName = kStriped ? "chained-striped" : "chained";
  static constexpr Concurrency kConcurrency = kStriped ? Concurrency::many_writers : Concurrency::single_thread;
  static constexpr std::size_t kMaxStripes = std::size_t{1} << 16;

  explicit ChainedTable(std::size_t capacity)
      : heads_(std::bit_ceil(std::max<std::size_t>(capacity, 1)), kEnd),
        mask_(static_cast<std::uint32_t>(heads_.size() - 1)),
        nodes_(capacity),
        stripe_count_(kStriped ? std::min(heads_.size(), kMaxStripes) : 0),
        stripes_(std::make_unique<Spinlock[]>(stripe_count_)) {
    for (std::size_t i = 0; i < capacity; ++i) nodes_[i].next = i + 1 < capacity ? static_cast<FlowId>(i + 1) : kEnd;
    free_head_ = capacity > 0 ? 0 : kEnd;
  }

  FlowId find(const Key& key, std::uint32_t hash) const {
    [[maybe_unused]] const auto guard = lock_bucket(hash & mask_);
    return find_in_chain(key, hash);
  }

  // Prefetches every head of the burst, then (single-threaded only: the heads may change under other
  // writers) every first node, then walks the chains.
  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    const std::size_t n = keys.size();
    for (std::size_t i = 0; i < n; ++i) __builtin_prefetch(&heads_[hashes[i] & mask_]);
    if constexpr (!kStriped) {
      for (std::size_t i = 0; i < n; ++i) {
        const FlowId head = heads_[hashes[i] & mask_];
        if (head != kEnd) __builtin_prefetch(&nodes_[head]);
      }
    }
    return find_each(*this, keys, hashes, ids);
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    const std::uint32_t bucket = hash & mask_;
    [[maybe_unused]] const auto guard = lock_bucket(bucket);
    if (const FlowId found = find_in_chain(key, hash); found != kNoFlow) return {found, InsertStatus::existed};
    const FlowId id = take_node();
    if (id == kEnd) return {};
    FlowId& head = heads_[bucket];
    nodes_[id] = {key, hash, head};
    head = id;
    return {id, InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    [[maybe_unused]] const auto guard = lock_bucket(hash & mask_);
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
  // The visitor runs under the bucket's lock and must not call into the table.
  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::size_t visited = 0;
    const std::size_t end = std::min(cursor + max_positions, heads_.size());
    for (; cursor < end; ++cursor) {
      [[maybe_unused]] const auto guard = lock_bucket(static_cast<std::uint32_t>(cursor));
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
  std::size_t size() const {
    [[maybe_unused]] const auto guard = lock_pool();
    return in_use_;
  }
  std::size_t capacity() const { return nodes_.size(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + heads_.capacity() * sizeof(FlowId) + nodes_.capacity() * sizeof(Node) +
           stripe_count_ * sizeof(Spinlock);
  }

 private:
  static constexpr FlowId kEnd = kNoFlow;

  struct Node {
    Key key;
    std::uint32_t hash;
    FlowId next;  // next node of the chain, or of the free list
  };

  struct NoLock {};

  // A held lock in striped mode, nothing otherwise (returned by value: guaranteed copy elision).
  auto lock_bucket(std::uint32_t bucket) const {
    if constexpr (kStriped) {
      return std::lock_guard<Spinlock>(stripes_[bucket & (stripe_count_ - 1)]);
    } else {
      return NoLock{};
    }
  }
  auto lock_pool() const {
    if constexpr (kStriped) {
      return std::lock_guard<Spinlock>(pool_lock_);
    } else {
      return NoLock{};
    }
  }

  // Caller holds the bucket's lock.
  FlowId find_in_chain(const Key& key, std::uint32_t hash) const {
    for (FlowId i = heads_[hash & mask_]; i != kEnd; i = nodes_[i].next) {
      if (nodes_[i].hash == hash && nodes_[i].key == key) return i;
    }
    return kNoFlow;
  }

  FlowId take_node() {
    [[maybe_unused]] const auto guard = lock_pool();
    const FlowId id = free_head_;
    if (id != kEnd) {
      free_head_ = nodes_[id].next;
      ++in_use_;
    }
    return id;
  }

  // Removes the node `*link` points at and returns it to the free list; caller holds the bucket's lock.
  void unlink(FlowId* link) {
    const FlowId i = *link;
    *link = nodes_[i].next;
    [[maybe_unused]] const auto guard = lock_pool();
    nodes_[i].next = free_head_;
    free_head_ = i;
    --in_use_;
  }

  std::vector<FlowId> heads_;
  std::uint32_t mask_;
  std::vector<Node> nodes_;
  std::size_t stripe_count_;                  // a power of two (heads_.size() is), 0 when not striped
  std::unique_ptr<Spinlock[]> stripes_;       // mutable through the pointer: const calls lock them too
  mutable Spinlock pool_lock_;                // guards free_head_, in_use_ and the free nodes' links
  FlowId free_head_;
  std::size_t in_use_ = 0;
};

}  // namespace flowtrack
