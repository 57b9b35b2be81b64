// A live dispatcher's choice of worker for each packet (`run --dispatch`, dispatcher.hpp):
//  - rss:  the static redirection table over the packet's symmetric Toeplitz hash, exactly what the
//          partition before the run computes (rss_steering.hpp), so each worker gets the same packets in
//          the same order as with `--dispatch partition`;
//  - laps: the LAPS scheduler of the simulator (sched/laps_scheduler.hpp), unchanged, with the workers
//          as its cores and one service (one network function): the connection's bucket in the
//          linear-hashing map table, unless the migration table moved it; an aggressive connection
//          (in the detector's 16-entry cache) headed for a worker whose queue holds at least half its
//          ring moves for good to the least loaded worker, if that one is under half.
// A worker's load, LAPS's only feedback, is what the dispatcher handed it and it has not taken yet: the
// packets in its ring and those of the current burst not yet pushed. Packets that do not parse as IP go
// to worker 0 (a NIC's default queue), which counts them as parse drops.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "flowtrack/runtime/packet_tags.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/laps_scheduler.hpp"

namespace flowtrack {

// partition: no dispatcher; the trace is split by RSS before the run (each worker replays its own queue).
enum class DispatchPolicy : std::uint8_t { partition, rss, laps };

// Throws std::invalid_argument for an unknown name (partition, rss, laps).
DispatchPolicy dispatch_policy(std::string_view name);

class WorkerPicker {
 public:
  // `ring_capacity`: the workers' ring size, whose half is LAPS's queue threshold.
  WorkerPicker(DispatchPolicy policy, unsigned workers, std::size_t ring_capacity);

  // The worker for this packet; `migrated` is set when LAPS has just moved the packet's connection.
  unsigned pick(const PacketTag& tag, Picos now, bool& migrated);

  // Load feedback: a packet handed to `worker`; `count` packets that left its queue (taken by it, or
  // dropped because its ring stayed full).
  void handed(unsigned worker) { loads_.arrive(worker); }
  void left(unsigned worker, std::size_t count, Picos now) {
    for (std::size_t i = 0; i < count; ++i) loads_.depart(worker, now);
  }
  unsigned load(unsigned worker) const { return loads_.load(worker); }

 private:
  DispatchPolicy policy_;
  RssSteering rss_;
  CoreLoads loads_;
  std::unique_ptr<LapsScheduler> laps_;  // laps only
};

}  // namespace flowtrack
