// A test-and-test-and-set spinlock with exponential pause backoff: the "spinlock" scaling strategy's
// lock, and the writer lock of the lock-free strategy.
//
// lock() spins on a plain load (the cache line stays shared while the lock is held, so waiters do not
// steal it from the holder) and only tries the atomic exchange once the lock looks free. Each failed
// round doubles the number of pause instructions, up to kMaxPauses, so that many waiters do not all
// retry in the same cycle. It never sleeps: it is meant for critical sections of a few hundred cycles
// on cores that run nothing else. Satisfies Lockable (std::lock_guard, std::scoped_lock).
#pragma once

#include <immintrin.h>

#include <atomic>

namespace flowtrack {

class Spinlock {
 public:
  void lock() {
    unsigned pauses = 1;
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
        for (unsigned i = 0; i < pauses; ++i) _mm_pause();
        if (pauses < kMaxPauses) pauses *= 2;
      }
    }
  }

  bool try_lock() { return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire); }

  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr unsigned kMaxPauses = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace flowtrack
