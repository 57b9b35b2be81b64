// A worker's source when a dispatcher feeds it (runtime/dispatched_replay.hpp): the slots its ring hands
// over, filled from the arena every worker shares (a slot is handed to one worker only, so the workers
// write disjoint buffers of it). An empty ring is polled again (counted: idle_polls), giving up the core
// now and then (the worker may share it with the dispatcher), until the dispatcher says it is done.
//
// Two things the reordering experiment (`run --dispatch ... --slow-worker-ns`) asks of it, off unless
// asked: the delivery of every packet (the end of the burst that held it, recorded at the next call:
// runtime/reordering.hpp), and extra busy work per packet on a slowed worker.
#pragma once

#include <immintrin.h>

#include <array>
#include <atomic>
#include <chrono>
#include <span>
#include <thread>
#include <vector>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/runtime/reordering.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/sync/spsc_ring.hpp"

namespace flowtrack {

class RingSource {
 public:
  // `done` turns true once the dispatcher has pushed its last slot. `delivered`: where deliveries are
  // recorded, or null.
  RingSource(SpscRing& ring, ReplaySource& arena, const std::atomic<bool>& done, std::uint64_t& idle_polls,
             std::vector<Delivery>* delivered = nullptr, std::chrono::nanoseconds extra_per_packet = {})
      : ring_(ring), arena_(arena), done_(done), idle_polls_(idle_polls), delivered_(delivered), extra_per_packet_(extra_per_packet) {}

  LinkType link_type() const { return arena_.link_type(); }
  bool done() const { return finished_; }

  std::size_t next(std::span<NfPacket> burst) {
    record_delivery();
    std::size_t n = 0;
    for (unsigned polls = 1;; ++polls) {
      const bool finished = done_.load(std::memory_order_acquire);  // read before the pop
      n = ring_.pop(std::span(slots_).first(burst.size()));
      if (n != 0) break;
      if (finished) {
        finished_ = true;
        return 0;
      }
      ++idle_polls_;
      if (polls % 64 == 0) {
        std::this_thread::yield();
      } else {
        _mm_pause();
      }
    }
    if (extra_per_packet_.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + extra_per_packet_ * n;
      while (std::chrono::steady_clock::now() < until) _mm_pause();
    }
    for (std::size_t i = 0; i < n; ++i) arena_.fill(slots_[i], burst[i]);
    in_flight_ = n;
    return n;
  }

 private:
  void record_delivery() {
    if (in_flight_ == 0 || delivered_ == nullptr) return;
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    for (std::size_t i = 0; i < in_flight_; ++i) delivered_->push_back({slots_[i], now});
    in_flight_ = 0;
  }

  SpscRing& ring_;
  ReplaySource& arena_;
  const std::atomic<bool>& done_;
  std::uint64_t& idle_polls_;
  std::vector<Delivery>* delivered_;
  std::chrono::nanoseconds extra_per_packet_;
  std::array<std::uint32_t, kMaxBurst> slots_{};
  std::size_t in_flight_ = 0;  // slots_ of the burst being processed
  bool finished_ = false;
};

}  // namespace flowtrack
