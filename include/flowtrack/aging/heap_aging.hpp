// "heap": a binary min-heap of (deadline, FlowId), the expiry structure of FastClick's IPRewriter and
// the baseline the timer wheel is measured against ([mt-nat] found its per-packet re-sift growing with
// the number of flows). It is written to be as fast as a heap can be, so that the comparison is fair:
// a flat array heap in which sifts move a hole instead of swapping, and a position array indexed by
// FlowId so that a packet re-sifts its own node at once, without searching.
//
// Every packet moves the flow's deadline later, so touch() sifts its node down, towards the leaves; the
// root is always the next flow to expire, and advance() pops roots while they are due, exactly on time.
//
// Invariants: position_[nodes_[i].id] == i for every i < size_, and kAbsent for every id not in the
// heap; each node's deadline is <= its children's. touch() relies on the clock never going back (the
// deadline only grows); were it to, affected flows would expire late, never early or never.
//
// Costs: touch and set_timeout: O(log n) (a load of the timeout, then one compare per level the node
// moves, each a likely cache miss in a large heap). arm, cancel: O(log n). advance: O(log n) per expired
// flow, O(1) when nothing is due; `budget` counts expired flows. Memory per flow: 28 bytes (16 node,
// 4 position, 8 timeout). Concurrency: single thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "flowtrack/aging/aging_policy.hpp"

namespace flowtrack {

class HeapAging {
 public:
  static constexpr std::string_view kName = "heap";
  static constexpr bool kRemovesFromTable = false;

  explicit HeapAging(std::size_t capacity)
      : nodes_(capacity), position_(capacity, kAbsent), timeouts_(capacity, kMaxTimeout) {}

  void arm(FlowId id, Nanos now, Nanos timeout) {
    const Node node{now + store_timeout(id, timeout), id};
    if (position_[id] == kAbsent) {
      sift_up(size_++, node);
    } else {
      reposition(position_[id], node);
    }
  }

  // arm() with the first deadline given: a timer carried over from a saved state (conn_tracker.hpp's
  // restore), `timeout` after each later packet.
  void arm_until(FlowId id, Nanos deadline, Nanos timeout) {
    store_timeout(id, timeout);
    const Node node{deadline, id};
    if (position_[id] == kAbsent) {
      sift_up(size_++, node);
    } else {
      reposition(position_[id], node);
    }
  }

  // Brings what touch() of `id` reads first (its heap position, its timeout) towards the cache.
  void prefetch(FlowId id) const {
    __builtin_prefetch(&position_[id]);
    __builtin_prefetch(&timeouts_[id]);
  }
  void touch(FlowId id, Nanos now) {
    const std::uint32_t at = position_[id];
    if (at == kAbsent) return;
    sift_down(at, {now + timeouts_[id], id});
  }

  void set_timeout(FlowId id, Nanos now, Nanos timeout) {
    const std::uint32_t at = position_[id];
    if (at == kAbsent) return;
    reposition(at, {now + store_timeout(id, timeout), id});
  }

  void cancel(FlowId id) {
    const std::uint32_t at = position_[id];
    if (at == kAbsent) return;
    remove_at(at);
  }

  template <class OnExpire>
  std::size_t advance(Nanos now, std::size_t budget, OnExpire&& on_expire) {
    std::size_t expired = 0;
    while (expired < budget && size_ > 0 && nodes_[0].deadline <= now) {
      const FlowId id = nodes_[0].id;
      remove_at(0);
      ++expired;
      on_expire(id);
    }
    return expired;
  }

  bool armed(FlowId id) const { return position_[id] != kAbsent; }
  Nanos deadline(FlowId id) const { return armed(id) ? nodes_[position_[id]].deadline : kNever; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return position_.size(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) + nodes_.capacity() * sizeof(Node) + position_.capacity() * sizeof(std::uint32_t) +
           timeouts_.capacity() * sizeof(Nanos);
  }

 private:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

  struct Node {
    Nanos deadline = kNever;
    FlowId id = kNoFlow;
  };

  Nanos store_timeout(FlowId id, Nanos timeout) { return timeouts_[id] = std::min(timeout, kMaxTimeout); }

  void put(std::uint32_t at, const Node& node) {
    nodes_[at] = node;
    position_[node.id] = at;
  }

  // Moves the hole at `at` up past every parent due later than `node`, then fills it with `node`.
  void sift_up(std::uint32_t at, const Node& node) {
    while (at > 0) {
      const std::uint32_t parent = (at - 1) / 2;
      if (nodes_[parent].deadline <= node.deadline) break;
      put(at, nodes_[parent]);
      at = parent;
    }
    put(at, node);
  }

  // Moves the hole at `at` down past every smaller child due earlier than `node`, then fills it.
  void sift_down(std::uint32_t at, const Node& node) {
    for (;;) {
      std::uint32_t child = 2 * at + 1;
      if (child >= size_) break;
      if (child + 1 < size_ && nodes_[child + 1].deadline < nodes_[child].deadline) ++child;
      if (node.deadline <= nodes_[child].deadline) break;
      put(at, nodes_[child]);
      at = child;
    }
    put(at, node);
  }

  // Puts `node` in the hole at `at`, sifting whichever way its deadline requires.
  void reposition(std::uint32_t at, const Node& node) {
    if (at > 0 && node.deadline < nodes_[(at - 1) / 2].deadline) {
      sift_up(at, node);
    } else {
      sift_down(at, node);
    }
  }

  // Takes the node at `at` out and refills the hole with the last node.
  void remove_at(std::uint32_t at) {
    position_[nodes_[at].id] = kAbsent;
    const Node last = nodes_[--size_];
    if (at < size_) reposition(at, last);
  }

  std::vector<Node> nodes_;             // nodes_[0, size_) is the heap, nodes_[0] the earliest deadline
  std::vector<std::uint32_t> position_;  // per FlowId: its index in nodes_, or kAbsent
  std::vector<Nanos> timeouts_;          // per FlowId
  std::uint32_t size_ = 0;
};

}  // namespace flowtrack
