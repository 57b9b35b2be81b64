// Quiescent-state-based reclamation (QSBR): when may a writer reuse what it removed from a table that
// readers search without locks?
//
// Readers register once and then, between bursts, announce a quiescent state: a moment at which they
// hold no reference (FlowId, pointer) obtained from the table. A writer that has removed an entry takes
// a token (retire()); the entry's FlowId may be reused once every registered reader has announced a
// quiescent state after that moment, i.e. once horizon() >= token. Nothing blocks: the writer keeps
// retired ids in a FIFO and reclaims from its head when the horizon has passed them.
//
// The clock is one global epoch counter. retire() increments it and returns the new value; a
// reader's quiescent() records the epoch it read. A reader that recorded an epoch >= token read the
// counter after the writer's increment, which the writer made after removing the entry, so its
// lookups since then cannot return that entry; and all its lookups before were finished when it
// recorded (release store). An offline reader (slot value 0) holds nothing.
//
// Why not liburcu or DPDK's rte_rcu_qsbr: both synchronise through code that ThreadSanitizer does not
// see (inline assembly, an uninstrumented shared library), so the stress tests could not check the
// reclamation; this is the same algorithm in std::atomic, and it is small.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace flowtrack {

class QsbrDomain {
 public:
  explicit QsbrDomain(unsigned max_readers) : slots_(std::make_unique<Slot[]>(max_readers)), max_readers_(max_readers) {}

  // Takes a free reader slot and puts the reader online; throws when all max_readers are taken.
  unsigned register_reader() {
    for (unsigned slot = 0; slot < max_readers_; ++slot) {
      bool expected = false;
      if (slots_[slot].taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        slots_[slot].seen.store(epoch_.load(std::memory_order_acquire), std::memory_order_relaxed);
        // Pairs with the fence in horizon(): either the writer sees this reader online, or this
        // reader's next lookups see every removal the writer made before looking.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return slot;
      }
    }
    throw std::length_error("QsbrDomain: every reader slot is taken");
  }

  // The reader leaves: it holds nothing from now on and frees its slot.
  void unregister_reader(unsigned slot) {
    slots_[slot].seen.store(kOffline, std::memory_order_release);
    slots_[slot].taken.store(false, std::memory_order_release);
  }

  // The reader holds no reference obtained from the table before this call.
  void quiescent(unsigned slot) {
    slots_[slot].seen.store(epoch_.load(std::memory_order_acquire), std::memory_order_release);
  }

  // Writer: call after removing an entry; the entry may be reused once horizon() >= the result.
  std::uint64_t retire() { return epoch_.fetch_add(1, std::memory_order_acq_rel) + 1; }

  // The oldest epoch some online reader may still be working in (the current epoch when none is).
  std::uint64_t horizon() const {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::uint64_t oldest = epoch_.load(std::memory_order_acquire);
    for (unsigned slot = 0; slot < max_readers_; ++slot) {
      const std::uint64_t seen = slots_[slot].seen.load(std::memory_order_acquire);
      if (seen != kOffline && seen < oldest) oldest = seen;
    }
    return oldest;
  }

  unsigned max_readers() const { return max_readers_; }

 private:
  static constexpr std::uint64_t kOffline = 0;  // the epoch starts at 1, so 0 is never a real epoch

  struct alignas(64) Slot {  // one cache line per reader: announcing never disturbs another core
    std::atomic<std::uint64_t> seen{kOffline};
    std::atomic<bool> taken{false};
  };

  alignas(64) std::atomic<std::uint64_t> epoch_{1};
  std::unique_ptr<Slot[]> slots_;
  unsigned max_readers_;
};

}  // namespace flowtrack
