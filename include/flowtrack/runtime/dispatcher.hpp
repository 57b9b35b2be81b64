// The one software dispatcher (`run --dispatch rss|laps`, `bench scale --steering software`): a thread,
// on a core of its own, that walks the packets of a shared arena in arrival order, a burst at a time,
// picks each packet's worker (worker_picker.hpp) and hands the packets' slots to the workers over one
// single-producer single-consumer ring each (spsc_ring.hpp), one push per worker per burst.
//
// Where the worker comes from: the packet's tag, computed before the run as a NIC computes the RSS hash
// it writes into the receive descriptor (packet_tags.hpp); or, with hash_in_software, the symmetric
// Toeplitz hash of the packet's frame computed here, packet by packet, as a dispatcher in front of a NIC
// without RSS must (rss only).
//
// A full ring: on_full = drop waits, yielding the core (the dispatcher may share it with a worker), for
// at most `ring_wait`, then drops what still finds no room and counts it against that worker
// (ring_full): a stalled worker costs packets, never a dispatcher blocked for ever, and no packet is
// lost uncounted. on_full = wait waits until there is room (a measurement that must lose nothing).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/runtime/packet_tags.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/worker_picker.hpp"
#include "flowtrack/sync/spsc_ring.hpp"

namespace flowtrack {

enum class OnFull : std::uint8_t { drop, wait };

struct DispatchOptions {
  DispatchPolicy policy = DispatchPolicy::partition;
  std::size_t ring_capacity = 1024;  // packet slots per worker ring (rounded up to a power of two)
  OnFull on_full = OnFull::drop;
  std::chrono::nanoseconds ring_wait = std::chrono::milliseconds(100);  // on_full = drop
  bool hash_in_software = false;
  unsigned passes = 1;  // times the arena is walked (a pass hands every slot out again)
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
  // `tags[slot]` for every slot of `arena` (unused with hash_in_software).
  Dispatcher(const DispatchOptions& options, std::span<const std::unique_ptr<SpscRing>> rings, const ReplaySource& arena,
             std::span<const PacketTag> tags);

  // Hands out every slot of the arena (`passes` times), `burst` at a time, then returns.
  DispatchCounters run(std::size_t burst);

 private:
  unsigned pick(std::uint32_t slot, Picos now);
  // Reports to the picker what each worker has taken since the last call.
  void refresh_loads(Picos now);
  // Pushes `pending` into `worker`'s ring as on_full says.
  void push(unsigned worker, std::span<const std::uint32_t> pending);

  DispatchOptions options_;
  std::span<const std::unique_ptr<SpscRing>> rings_;
  const ReplaySource& arena_;
  std::span<const PacketTag> tags_;
  RssSteering rss_;  // hash_in_software
  WorkerPicker picker_;
  std::vector<std::size_t> popped_seen_;  // per worker: its ring's popped() at the last refresh
  DispatchCounters counters_;
};

}  // namespace flowtrack
