// What the workers of a dispatched run share (`run --dispatch rss|laps`; runtime/nf_runner.hpp runs it):
// every packet of the partition, in trace order, laid out before the run in one replay arena
// (replay_source.hpp) whose slot numbers are the packets' arrival ranks; one ring per worker; the
// dispatcher (dispatcher.hpp) that fills them on a thread of its own. Each worker reads its ring
// through a RingSource, the burst loop's source (burst_loop.hpp): the network function and the loop
// are the ones a partitioned run uses, only where the packets come from differs.
//
// A slot is handed to exactly one worker (or dropped), so the workers write disjoint buffers of the
// shared arena, and each worker's VerdictLog, indexed by slot, holds verdicts for its own packets only.
#pragma once

#include <immintrin.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/runtime/dispatcher.hpp"
#include "flowtrack/runtime/reordering.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/sync/spsc_ring.hpp"

namespace flowtrack {

// What a dispatched run adds to one worker's result.
struct WorkerDispatchCounters {
  std::uint64_t ring_full = 0;      // packets for this worker dropped at its full ring
  std::uint64_t migrations_in = 0;  // LAPS: connections moved onto this worker
  std::uint64_t out_of_order = 0;   // packets this worker finished after a later one of their flow (reordering.hpp)
};

// A worker's source: the slots its ring hands over, filled from the shared arena. It records when each
// burst is finished (at the next call) for the reordering count and, on a slowed worker, spins for the
// extra work per packet before handing the burst over.
class RingSource {
 public:
  RingSource(SpscRing& ring, ReplaySource& buffers, const std::atomic<bool>& done, std::chrono::nanoseconds extra_per_packet,
             std::vector<Delivery>& delivered)
      : ring_(ring), buffers_(buffers), done_(done), extra_per_packet_(extra_per_packet), delivered_(delivered) {}

  LinkType link_type() const { return buffers_.link_type(); }

  std::size_t next(std::span<NfPacket> burst) {
    record_delivery();
    std::size_t n = 0;
    for (unsigned polls = 1;; ++polls) {
      const bool finished = done_.load(std::memory_order_acquire);  // read before the pop
      n = ring_.pop(std::span(slots_).first(burst.size()));
      if (n != 0 || finished) break;
      // The worker may share its core with the dispatcher: give it up now and then.
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
    for (std::size_t i = 0; i < n; ++i) buffers_.fill(slots_[i], burst[i]);
    in_flight_ = n;
    return n;
  }

 private:
  void record_delivery() {
    if (in_flight_ == 0) return;
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    for (std::size_t i = 0; i < in_flight_; ++i) delivered_.push_back({slots_[i], now});
    in_flight_ = 0;
  }

  SpscRing& ring_;
  ReplaySource& buffers_;
  const std::atomic<bool>& done_;
  std::chrono::nanoseconds extra_per_packet_;
  std::vector<Delivery>& delivered_;
  std::array<std::uint32_t, kMaxBurst> slots_{};
  std::size_t in_flight_ = 0;  // slots_ of the burst being processed
};

class DispatchedRun {
 public:
  // `partition.tags` must hold a tag per packet of `trace` (tag_packets).
  DispatchedRun(const PacketStore& trace, const PacketPartition& partition, unsigned workers, const DispatchOptions& options);

  RingSource source(unsigned worker);
  // The arena whose slots the workers' VerdictLogs index.
  const ReplaySource& buffers() const { return buffers_; }
  Nanos first_time() const { return buffers_.first_time(); }

  // The dispatcher thread's body: hands out every packet, then tells the workers there is no more.
  void dispatch(std::size_t burst);
  // After every thread has stopped: what the dispatch did to each worker.
  std::vector<WorkerDispatchCounters> counters() const;

 private:
  DispatchOptions options_;
  std::vector<std::uint32_t> order_;  // slot -> index in the trace
  std::vector<PacketTag> tags_;       // by slot
  ReplaySource buffers_;
  std::vector<std::unique_ptr<SpscRing>> rings_;
  std::vector<std::vector<Delivery>> delivered_;  // per worker
  DispatchCounters dispatched_;
  std::atomic<bool> done_{false};
};

}  // namespace flowtrack
