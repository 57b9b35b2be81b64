// The software dispatcher of a dispatched run (`run --dispatch rss|laps`): one thread, on a core of its
// own, that reads the trace in bursts, picks each packet's worker (worker_picker.hpp) and hands the
// packets to the workers over one single-producer single-consumer ring each (spsc_ring.hpp), one push
// per worker per burst.
//
// A full ring is waited on, yielding the core (the dispatcher may share it with a worker), for at most
// `ring_wait`; what still finds no room then is dropped and counted against that worker (ring_full):
// a stalled worker costs packets, never a dispatcher blocked for ever, and no packet is lost uncounted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/runtime/packet_tags.hpp"
#include "flowtrack/sync/spsc_ring.hpp"
#include "flowtrack/runtime/worker_picker.hpp"

namespace flowtrack {

struct DispatchOptions {
  DispatchPolicy policy = DispatchPolicy::partition;
  std::size_t ring_capacity = 1024;  // packet slots per worker ring (rounded up to a power of two)
  std::chrono::nanoseconds ring_wait = std::chrono::milliseconds(100);
  // Extra busy work on worker 0, per packet it takes (the slowed worker of the reordering experiment).
  std::chrono::nanoseconds slow_worker = std::chrono::nanoseconds(0);
};

// What the dispatcher did, per worker.
struct DispatchCounters {
  std::vector<std::uint64_t> ring_full;      // packets dropped: the worker's ring stayed full
  std::vector<std::uint64_t> migrations_in;  // LAPS: connections moved onto the worker
};

class Dispatcher {
 public:
  Dispatcher(const DispatchOptions& options, std::span<const std::unique_ptr<SpscRing>> rings);

  // Hands out the packets 0 .. tags.size()-1 (tags[slot]), `burst` at a time, then returns.
  DispatchCounters run(std::span<const PacketTag> tags, std::size_t burst);

 private:
  // Reports to the picker what each worker has taken since the last call.
  void refresh_loads(Picos now);
  // Pushes `pending` into `worker`'s ring, waiting for room at most ring_wait.
  void push(unsigned worker, std::span<const std::uint32_t> pending);

  DispatchOptions options_;
  std::span<const std::unique_ptr<SpscRing>> rings_;
  WorkerPicker picker_;
  std::vector<std::size_t> popped_seen_;  // per worker: its ring's popped() at the last refresh
  DispatchCounters counters_;
};

}  // namespace flowtrack
