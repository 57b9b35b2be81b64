// Optimistic concurrency for one writer and many readers of a compact lookup structure: version
// counters striped over the structure's positions, plus one epoch counter for whole-structure rewrites.
//
// Memory-ordering invariant (the one every lookup structure in compact/ relies on):
//   The writer makes every stripe it is about to touch odd (relaxed store, then a release fence),
//   writes its cells with relaxed atomic stores, then makes the stripes even again with release stores.
//   A reader loads the stripes of the positions it will read with acquire, reads the cells with relaxed
//   atomic loads, issues an acquire fence, and reloads the stripes: if any was odd or changed, it
//   retries. So a reader that accepts a result read no cell while a write covering that cell was under
//   way, and never returns a torn or half-applied value. Readers wait only while a single message is
//   being applied (a few cells), never for the writer's own work (cuckoo searches, rebuilds).
// A position maps to stripe `position & (stripes - 1)`; the epoch guards state that every lookup reads
// (seeds, sizes) and is bumped by rewrites of the whole structure.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace flowtrack::compact {

// ThreadSanitizer does not model std::atomic_thread_fence (GCC warns: -Wtsan). Under it the fences are
// compiler barriers: the order of the code is kept and, every access being atomic, TSan still sees no
// race; the fences proper are in every other build.
inline void stripes_fence(std::memory_order order) {
#ifdef FLOWTRACK_TSAN
  std::atomic_signal_fence(order);
#else
  std::atomic_thread_fence(order);
#endif
}

// A rewrite of one VIP's arrays copied in place under a per-VIP epoch and a structure-wide generation
// (the lookup structures of Concury's two layouts): both odd while it lasts, under the invariant above,
// even again after. Plain counters, not VersionStripes: a bulk lookup validates a whole chunk against
// the one generation word.
class InPlaceRewrite {
 public:
  InPlaceRewrite(std::uint32_t& epoch, std::uint32_t& generation) : epoch_(epoch), generation_(generation) {
    bump();
    stripes_fence(std::memory_order_release);
  }
  ~InPlaceRewrite() { bump(); }
  InPlaceRewrite(const InPlaceRewrite&) = delete;
  InPlaceRewrite& operator=(const InPlaceRewrite&) = delete;

 private:
  // Only the writer stores: a load and a release store.
  void bump() {
    for (std::uint32_t* counter : {&epoch_, &generation_}) __atomic_store_n(counter, *counter + 1, __ATOMIC_RELEASE);
  }
  std::uint32_t& epoch_;
  std::uint32_t& generation_;
};

class VersionStripes {
 public:
  // `stripes` is a power of two; 1 makes every write exclusive of every read.
  explicit VersionStripes(std::size_t stripes = 8192)
      : mask_(stripes - 1), versions_(std::make_unique<std::atomic<std::uint32_t>[]>(stripes)) {
    for (std::size_t i = 0; i < stripes; ++i) versions_[i].store(0, std::memory_order_relaxed);
  }

  std::uint32_t stripe_of(std::uint64_t position) const { return static_cast<std::uint32_t>(position & mask_); }
  std::size_t bytes() const { return (mask_ + 1) * sizeof(std::uint32_t) + sizeof(epoch_); }

  // ---- readers: take the epoch first (before reading seeds or sizes), then the stripes of the two
  // positions to read (they may coincide), read, and validate.
  struct Snapshot {
    std::uint32_t epoch, first, second;
  };
  std::uint32_t epoch_begin() const {
    for (;;) {
      const std::uint32_t e = epoch_.load(std::memory_order_acquire);
      if ((e & 1u) == 0) return e;
    }
  }
  Snapshot stripes_begin(std::uint32_t epoch, std::uint32_t first_stripe, std::uint32_t second_stripe) const {
    for (;;) {
      const Snapshot s{epoch, versions_[first_stripe].load(std::memory_order_acquire),
                       versions_[second_stripe].load(std::memory_order_acquire)};
      if (((s.first | s.second) & 1u) == 0) return s;
    }
  }
  bool read_valid(const Snapshot& s, std::uint32_t first_stripe, std::uint32_t second_stripe) const {
    stripes_fence(std::memory_order_acquire);
    return versions_[first_stripe].load(std::memory_order_relaxed) == s.first &&
           versions_[second_stripe].load(std::memory_order_relaxed) == s.second &&
           epoch_.load(std::memory_order_relaxed) == s.epoch;
  }

  // ---- the writer: a write section over a set of positions' stripes (duplicates allowed).
  class WriteSection {
   public:
    WriteSection(VersionStripes& owner, std::vector<std::uint32_t> stripes) : owner_(owner), stripes_(std::move(stripes)) {
      std::sort(stripes_.begin(), stripes_.end());
      stripes_.erase(std::unique(stripes_.begin(), stripes_.end()), stripes_.end());
      for (std::uint32_t s : stripes_) owner_.bump(owner_.versions_[s]);
      stripes_fence(std::memory_order_release);
    }
    ~WriteSection() {
      for (std::uint32_t s : stripes_) owner_.bump(owner_.versions_[s]);
    }
    WriteSection(const WriteSection&) = delete;
    WriteSection& operator=(const WriteSection&) = delete;

   private:
    VersionStripes& owner_;
    std::vector<std::uint32_t> stripes_;
  };

  // A write section over everything (seeds and sizes included).
  class ExclusiveSection {
   public:
    explicit ExclusiveSection(VersionStripes& owner) : owner_(owner) {
      owner_.bump(owner_.epoch_);
      stripes_fence(std::memory_order_release);
    }
    ~ExclusiveSection() { owner_.bump(owner_.epoch_); }
    ExclusiveSection(const ExclusiveSection&) = delete;
    ExclusiveSection& operator=(const ExclusiveSection&) = delete;

   private:
    VersionStripes& owner_;
  };

 private:
  // Only the writer stores, so a load and a store (no read-modify-write) suffice.
  static void bump(std::atomic<std::uint32_t>& version) {
    version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  std::size_t mask_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> versions_;
  std::atomic<std::uint32_t> epoch_{0};
};

}  // namespace flowtrack::compact
