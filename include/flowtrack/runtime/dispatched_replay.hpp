// What the workers of a dispatched replay share (`run --dispatch rss|laps`, `bench scale --steering
// software`): every packet to replay, in arrival order, laid out before the run in one arena
// (replay_source.hpp) whose slot numbers are the packets' arrival ranks; one ring per worker; the
// dispatcher (dispatcher.hpp) that fills them on a thread of its own. Each worker reads its ring through
// a RingSource (ring_source.hpp): the function, the loop and the output are the ones a partitioned
// replay uses, only where the packets come from differs.
//
// A slot is handed to exactly one worker per pass (or dropped), so the workers write disjoint buffers of
// the shared arena, and each worker's VerdictLog, indexed by slot, holds verdicts for its own packets.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/runtime/dispatcher.hpp"
#include "flowtrack/runtime/reordering.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/ring_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/runtime/worker_counters.hpp"

namespace flowtrack {

class DispatchedReplay {
 public:
  // The packets trace[i], i in `packets` (in trace order); `tags`: a tag per packet of `trace`
  // (tag_packets), unless the dispatcher hashes in software.
  DispatchedReplay(const PacketStore& trace, std::span<const std::uint32_t> packets, std::span<const PacketTag> tags,
                   unsigned workers, const DispatchOptions& options);

  // Worker w's source; `idle_polls`: where it counts polls of its empty ring.
  RingSource source(unsigned worker, std::uint64_t& idle_polls);
  // The arena whose slots the workers' VerdictLogs index.
  ReplaySource& arena() { return arena_; }
  Nanos first_time() const { return arena_.first_time(); }

  // The dispatcher thread's body: hands out every packet, then tells the workers there is no more.
  void dispatch(std::size_t burst);
  // After every thread has stopped: what the dispatch did to each worker (ring_full, migrations_in, and
  // out_of_order when deliveries were recorded: a run with tags), the rest of each record zero.
  std::vector<WorkerCounters> counters() const;

 private:
  DispatchOptions options_;
  std::vector<PacketTag> tags_;  // by slot
  ReplaySource arena_;
  std::vector<std::unique_ptr<SpscRing>> rings_;
  std::vector<std::vector<Delivery>> delivered_;  // per worker; recorded only with tags
  DispatchCounters dispatched_;
  std::atomic<bool> done_{false};
};

// Every packet of a partition, in trace order.
std::vector<std::uint32_t> arrival_order(const PacketPartition& partition);

}  // namespace flowtrack
