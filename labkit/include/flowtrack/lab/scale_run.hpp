// `bench scale`'s run: an in-memory trace through N pinned workers of the engine (runtime/engine.hpp),
// each running the flow meter (flow_meter.hpp: track, count, age) over a flow table, to measure what a
// way of sharing the table costs.
//
// Placement says where the flow table lives:
//  - sharded: one table (and one FlowRecord array) per worker, each sized for the flows RSS sends it;
//  - shared:  one table and one array for all workers (the table type brings its own synchronisation:
//             LockedTable, LockFreeTable, a striped or concurrent table).
// Steering says how packets reach workers:
//  - hardware: the trace is partitioned by RSS before the run; worker w replays queue w from memory of
//    its own, as if its NIC queue delivered it;
//  - software: the dispatcher (dispatcher.hpp), on a core of its own, computes the RSS hash of every
//    packet during the run and hands bursts of slots to the workers over SPSC rings (it waits for room:
//    no loss).
// Packets are stamped with the run's own clock, paced to a packet rate when asked (paced_replay.hpp);
// `passes` replays each worker's packets that many times.
//
// Tables are sized before the run from the trace: distinct IPv4 keys (of the shard, or all) / load.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "flowtrack/runtime/cpu.hpp"
#include "flowtrack/lab/discarding_output.hpp"
#include "flowtrack/runtime/dispatched_replay.hpp"
#include "flowtrack/runtime/engine.hpp"
#include "flowtrack/lab/flow_meter.hpp"
#include "flowtrack/lab/paced_replay.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/runtime/sharing.hpp"
#include "flowtrack/lab/placement.hpp"
#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/util/time.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

enum class Steering : std::uint8_t { hardware, software };

struct ScaleRunOptions {
  unsigned workers = 1;
  std::size_t burst = kDefaultBurst;
  Steering steering = Steering::hardware;
  unsigned passes = 1;
  double load = 0.75;  // table capacity = distinct flows / load
  AgingOptions aging;
  double pps_per_worker = 0;  // pacing; 0: as fast as the worker goes
  bool pin = true;
  std::size_t ring_capacity = 8192;  // software steering: packet slots per worker ring
};

struct ScaleReport {
  std::vector<WorkerCounters> workers;
  WorkerCounters total;
  std::vector<double> worker_seconds;  // each worker's first to last burst
  double seconds = 0;                  // first worker start to last worker stop
  std::size_t flows = 0;               // entries in the table(s) after the run
  std::size_t capacity = 0;            // of all tables together
  std::size_t memory_bytes = 0;        // tables + FlowRecord arrays
  bool dispatcher = false;             // software steering used one more core
  bool oversubscribed = false;         // more threads than usable cores

  double mpps() const { return seconds > 0 ? static_cast<double>(total.packets) / seconds / 1e6 : 0; }
  double worker_mpps(std::size_t w) const {
    return worker_seconds[w] > 0 ? static_cast<double>(workers[w].packets) / worker_seconds[w] / 1e6 : 0;
  }
  // Worker cycles (all workers) per packet; the dispatcher's are not included.
  double cycles_per_packet() const {
    return total.packets > 0 ? static_cast<double>(total.busy_cycles) / static_cast<double>(total.packets) : 0;
  }
  double stage_cycles_per_packet(NfStage stage) const {
    return total.packets > 0
               ? static_cast<double>(total.stage_cycles[static_cast<std::size_t>(stage)]) / static_cast<double>(total.packets)
               : 0;
  }
  double load() const { return capacity > 0 ? static_cast<double>(flows) / static_cast<double>(capacity) : 0; }
};

namespace detail {

inline std::size_t table_capacity_for(std::size_t flows, double load) {
  return std::max<std::size_t>(64, static_cast<std::size_t>(std::ceil(static_cast<double>(flows) / load)));
}

}  // namespace detail

template <Placement P, FlowTable Table>
ScaleReport scale_run(const PacketStore& store, const ScaleRunOptions& options) {
  const unsigned workers = std::max(1u, options.workers);
  const bool software = options.steering == Steering::software;
  const PacketPartition partition = partition_by_rss(store, RssSteering(workers));

  // Tables and records.
  std::vector<std::unique_ptr<Table>> tables;
  std::vector<std::vector<FlowRecord>> records;
  if constexpr (P == Placement::sharded) {
    for (unsigned w = 0; w < workers; ++w) {
      tables.push_back(std::make_unique<Table>(detail::table_capacity_for(partition.ipv4_flows[w], options.load)));
      records.emplace_back(tables.back()->capacity());
    }
  } else {
    const std::size_t flows = std::accumulate(partition.ipv4_flows.begin(), partition.ipv4_flows.end(), std::size_t{0});
    tables.push_back(std::make_unique<Table>(detail::table_capacity_for(flows, options.load)));
    records.emplace_back(tables.back()->capacity());
  }
  const auto shard = [&](unsigned w) { return P == Placement::sharded ? w : 0u; };

  const TscClock clock;
  OnePerWorker meters(
      [&](unsigned w, unsigned, Nanos start) {
        return std::make_unique<FlowMeter<Table>>(*tables[shard(w)], records[shard(w)], options.aging, start);
      },
      workers);
  Engine engine({.workers = workers,
                 .burst = options.burst,
                 .pin = options.pin ? PinPolicy::from_core(software ? 1 : 0) : PinPolicy::unpinned(),
                 .clock_stages = true});
  std::optional<DispatchedReplay> dispatch;
  if (software) {
    std::vector<std::uint32_t> all(store.size());
    std::iota(all.begin(), all.end(), 0u);
    dispatch.emplace(store, all, std::span<const PacketTag>{}, workers,
                     DispatchOptions{.policy = DispatchPolicy::rss,
                                     .ring_capacity = options.ring_capacity,
                                     .on_full = OnFull::wait,
                                     .hash_in_software = true,
                                     .passes = options.passes});
  }
  std::vector<std::uint64_t> begin(workers), end(workers);
  const auto serve = [&](unsigned w, auto& inner, StartGate& gate) {
    auto& meter = meters.instance(w, clock.now());
    Restamped source(inner, clock, options.pps_per_worker);
    DiscardingOutput out;
    gate.pass();
    begin[w] = tsc_begin();
    engine.serve(w, meter, source, out);
    end[w] = tsc_end();
  };
  const std::function<void(unsigned, StartGate&)> worker = [&](unsigned w, StartGate& gate) {
    if (software) {
      RingSource ring = dispatch->source(w, engine.counters(w).idle_polls);
      serve(w, ring, gate);
    } else {
      // The worker's packets in an arena of its own, laid out by the worker itself (first touch places
      // it near its core), as a NIC writes each queue into that queue's buffers. Reading them out of the
      // shared trace instead would make each core's prefetchers pull in the other queues' packets too.
      ReplaySource replay(store, partition.packets[w]);
      PassReplay passes(replay, options.passes);
      serve(w, passes, gate);
    }
  };
  std::vector<std::function<void(StartGate&)>> beside;
  if (software) {
    beside.push_back([&](StartGate& gate) {
      if (options.pin) pin_current_thread(0);
      gate.pass();
      dispatch->dispatch(options.burst);
    });
  }
  engine.run(worker, beside);

  ScaleReport report;
  report.dispatcher = software;
  report.oversubscribed = workers + (software ? 1 : 0) > usable_cpus();
  for (unsigned w = 0; w < workers; ++w) {
    report.workers.push_back(engine.counters(w));
    report.total += engine.counters(w);
    report.worker_seconds.push_back(static_cast<double>(end[w] - begin[w]) / tsc_hz());
  }
  const std::uint64_t first = *std::min_element(begin.begin(), begin.end());
  const std::uint64_t last = *std::max_element(end.begin(), end.end());
  report.seconds = static_cast<double>(last - first) / tsc_hz();
  for (std::size_t t = 0; t < tables.size(); ++t) {
    report.flows += tables[t]->size();
    report.capacity += tables[t]->capacity();
    report.memory_bytes += tables[t]->memory_bytes() + records[t].capacity() * sizeof(FlowRecord);
  }
  return report;
}

}  // namespace flowtrack
