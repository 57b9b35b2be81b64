// A bounded single-producer single-consumer ring of trivially copyable items, moved in bursts: how the
// software dispatcher hands packets (32-bit indices, SpscRing) to its workers, and how a network
// function hands its reports to a control plane on a thread of its own (batch_thread.hpp).
//
// head_ is written only by the consumer, tail_ only by the producer; each lives on its own cache line,
// and each side keeps a private copy of the other's index, refreshed only when the ring looks full
// (producer) or empty (consumer), so in steady state a burst costs one shared store per side.
// The producer's release store of tail_ publishes the items written before it; the consumer's
// release store of head_ hands the slots back.
//
// Why not rte_ring: it needs DPDK's EAL memory and ThreadSanitizer cannot see inside the DPDK library,
// so the dispatcher's stress test could not check the hand-over.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace flowtrack {

template <class Item>
class SpscRingOf {
  static_assert(std::is_trivially_copyable_v<Item>, "items are copied in and out of their slots");

 public:
  // `capacity` is rounded up to a power of two.
  explicit SpscRingOf(std::size_t capacity) : slots_(std::bit_ceil(std::max<std::size_t>(capacity, 2))), mask_(slots_.size() - 1) {}

  // Producer: appends as many of `items` as fit; returns how many.
  std::size_t push(std::span<const Item> items) {
    std::size_t free = slots_.size() - (producer_.tail - producer_.cached_head);
    if (free < items.size()) {
      producer_.cached_head = head_.load(std::memory_order_acquire);
      free = slots_.size() - (producer_.tail - producer_.cached_head);
    }
    const std::size_t n = std::min(free, items.size());
    for (std::size_t i = 0; i < n; ++i) slots_[(producer_.tail + i) & mask_] = items[i];
    producer_.tail += n;
    tail_.store(producer_.tail, std::memory_order_release);
    return n;
  }

  // Consumer: takes up to out.size() items; returns how many.
  std::size_t pop(std::span<Item> out) {
    std::size_t available = consumer_.cached_tail - consumer_.head;
    if (available < out.size()) {
      consumer_.cached_tail = tail_.load(std::memory_order_acquire);
      available = consumer_.cached_tail - consumer_.head;
    }
    const std::size_t n = std::min(available, out.size());
    for (std::size_t i = 0; i < n; ++i) out[i] = slots_[(consumer_.head + i) & mask_];
    consumer_.head += n;
    head_.store(consumer_.head, std::memory_order_release);
    return n;
  }

  std::size_t capacity() const { return slots_.size(); }

  // Producer: how many items the consumer has taken so far (ever); pushed - popped() are in the ring.
  std::size_t popped() const { return head_.load(std::memory_order_acquire); }

 private:
  struct alignas(64) ProducerSide {
    std::size_t tail = 0;
    std::size_t cached_head = 0;
  };
  struct alignas(64) ConsumerSide {
    std::size_t head = 0;
    std::size_t cached_tail = 0;
  };

  std::vector<Item> slots_;
  std::size_t mask_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
  ProducerSide producer_;
  ConsumerSide consumer_;
};

using SpscRing = SpscRingOf<std::uint32_t>;

}  // namespace flowtrack
