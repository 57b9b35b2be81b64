// A thread of its own that handles items in the order they are pushed, a batch at a time: how a network
// function hands work that need not hold up its packets (Concury's reports of new connections) to a
// control plane on another core. One producer (the thread that owns the object), one consumer (the
// thread it starts), an SpscRingOf between them.
//
// Progress: push() waits while the ring is full, so the producer is held back and nothing is lost; the
// consumer spins a short while when the ring is empty, then sleeps on `wakes_` (a futex, through C++20's
// atomic wait) until the next push.
//
// The hand-back: drain() waits until every item pushed has been handled (idle() tells whether they are). The consumer publishes
// handled_ (release) only after the handler returned and drain() reads it (acquire), so once drain()
// returns the producer sees everything the handler wrote, and the consumer touches none of it until the
// next push. Between a drain() and its next push() the producer may therefore use the handler's state
// directly: that is how the consumer's state is shared, with no lock.
//
// Where the consumer runs: a thread inherits its creator's affinity, and a worker is pinned to one core,
// so the consumer moves itself to the process's other cores (to all of them, when the producer's are
// the only ones).
//
// A handler that throws: the consumer keeps the first exception, counts the rest of the items handled
// unread (so that the producer is never stuck on a full ring), and the next drain() or push() rethrows it.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "flowtrack/sync/spsc_ring.hpp"

namespace flowtrack {

template <class Item>
class BatchThread {
 public:
  using Handler = std::function<void(std::span<const Item>)>;

  // `capacity` items may wait in the ring (rounded up to a power of two).
  BatchThread(std::size_t capacity, Handler handle)
      : ring_(capacity), handle_(std::move(handle)) {
    CPU_ZERO(&producer_cpus_);
    pthread_getaffinity_np(pthread_self(), sizeof(producer_cpus_), &producer_cpus_);
    thread_ = std::thread([this] { consume(); });
  }
  // Handles every item pushed, then joins.
  ~BatchThread() {
    stop_.store(true, std::memory_order_release);
    wake();
    thread_.join();
  }
  BatchThread(const BatchThread&) = delete;
  BatchThread& operator=(const BatchThread&) = delete;

  void push(std::span<const Item> items) {
    rethrow_failure();
    for (;;) {
      const std::size_t n = ring_.push(items);
      pushed_ += n;
      items = items.subspan(n);
      wake();
      if (items.empty()) return;
      std::this_thread::yield();  // full: the consumer needs the core more than we do
    }
  }

  // True when every item pushed has been handled: as after drain(), without waiting.
  bool idle() const {
    const bool caught_up = handled_.load(std::memory_order_acquire) == pushed_;
    rethrow_failure();
    return caught_up;
  }

  void drain() const {
    for (unsigned spins = 0; handled_.load(std::memory_order_acquire) != pushed_; ++spins) {
      if (spins < kSpins) {
        _mm_pause();
      } else {
        std::this_thread::yield();
      }
    }
    rethrow_failure();
  }

 private:
  static constexpr unsigned kSpins = 1024;     // pauses before a waiting side gives its core away
  static constexpr std::size_t kBatch = 256;  // items the consumer takes at a time

  void wake() {
    wakes_.fetch_add(1, std::memory_order_release);
    wakes_.notify_one();
  }

  void rethrow_failure() const {
    if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(failure_);
  }

  void leave_producer_cpus() const {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(getpid(), sizeof(cpus), &cpus) != 0) return;  // the main thread's: the process's
    cpu_set_t others;
    CPU_ZERO(&others);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &cpus) && !CPU_ISSET(cpu, &producer_cpus_)) CPU_SET(cpu, &others);
    }
    pthread_setaffinity_np(pthread_self(), sizeof(cpus), CPU_COUNT(&others) > 0 ? &others : &cpus);
  }

  void consume() {
    leave_producer_cpus();
    std::vector<Item> batch(kBatch);
    unsigned idle = 0;
    for (;;) {
      // Read before the ring: a push after this read changes it, so the wait below cannot miss it.
      const std::uint32_t seen = wakes_.load(std::memory_order_acquire);
      if (take(batch)) {
        idle = 0;
        continue;
      }
      if (stop_.load(std::memory_order_acquire)) {
        // The ring was read before stop_: items pushed just before the stop may be there still.
        while (take(batch)) {
        }
        return;
      }
      if (++idle < kSpins) {
        _mm_pause();
      } else {
        wakes_.wait(seen, std::memory_order_acquire);
      }
    }
  }

  // Handles one batch from the ring; false when the ring was empty.
  bool take(std::vector<Item>& batch) {
    const std::size_t n = ring_.pop(batch);
    if (n == 0) return false;
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        handle_(std::span<const Item>(batch.data(), n));
      } catch (...) {
        failure_ = std::current_exception();
        failed_.store(true, std::memory_order_release);
      }
    }
    handled_.fetch_add(n, std::memory_order_release);
    return true;
  }

  SpscRingOf<Item> ring_;
  Handler handle_;
  std::uint64_t pushed_ = 0;  // the producer's
  alignas(64) std::atomic<std::uint64_t> handled_{0};
  alignas(64) std::atomic<std::uint32_t> wakes_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr failure_;  // written once, before failed_ is released
  cpu_set_t producer_cpus_;     // the creator's affinity, read by the consumer as it starts
  std::thread thread_;          // last: started once everything above is set
};

}  // namespace flowtrack
