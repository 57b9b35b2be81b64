// The per-core runtime: replays an in-memory trace through N pinned worker threads and reports what
// each did.
//
// Placement says where the flow table lives:
//  - sharded: one table (and one FlowRecord array) per worker, each sized for the flows RSS sends it;
//  - shared:  one table and one array for all workers (the table type brings its own synchronisation:
//             LockedTable, LockFreeTable, a striped or concurrent table).
// Steering says how packets reach workers:
//  - hardware: the trace is partitioned by RSS before the run; worker w replays queue w from memory of
//    its own, as if its NIC queue delivered it;
//  - software: a dispatcher thread, on a core of its own, computes RSS for every packet during the run
//    and hands bursts of packet indices to the workers over SPSC rings (back-pressure, no loss).
// Each worker runs the data plane's one burst loop (burst_loop.hpp) with the flow meter as its function
// (flow_meter.hpp: track, count, age), reading the TSC clock once per burst, possibly paced to a packet
// rate (scale_sources.hpp). `passes` replays each worker's packets that many times (flows recur; with
// aging on, idle ones expire in between and come back as new flows).
//
// Tables are sized before the run from the trace: distinct IPv4 keys (of the shard, or all) / load.
// Thread start is a barrier, so the timed window holds only packet processing.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/cpu.hpp"
#include "flowtrack/runtime/discarding_output.hpp"
#include "flowtrack/runtime/flow_meter.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/runtime/scale_sources.hpp"
#include "flowtrack/runtime/stage_clock.hpp"
#include "flowtrack/sync/placement.hpp"
#include "flowtrack/sync/spsc_ring.hpp"
#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/util/time.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {


enum class Steering : std::uint8_t { hardware, software };

struct RunOptions {
  unsigned workers = 1;
  std::size_t burst = 32;
  Steering steering = Steering::hardware;
  unsigned passes = 1;
  double load = 0.75;  // table capacity = distinct flows / load
  AgingOptions aging;
  double pps_per_worker = 0;  // pacing; 0: as fast as the worker goes
  bool pin = true;
  std::size_t ring_capacity = 8192;  // software steering: packet indices per worker ring
};

struct RunReport {
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
RunReport run_trace(const PacketStore& store, const RunOptions& options) {
  const unsigned workers = std::max(1u, options.workers);
  const bool software = options.steering == Steering::software;
  const RssSteering steering(workers);
  const PacketPartition partition = partition_by_rss(store, steering);

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
  auto shard = [&](unsigned w) { return P == Placement::sharded ? w : 0u; };

  RunReport report;
  report.workers.resize(workers);
  report.worker_seconds.resize(workers);
  report.dispatcher = software;
  report.oversubscribed = workers + (software ? 1 : 0) > usable_cpus();
  std::vector<std::uint64_t> begin(workers), end(workers);
  std::vector<std::unique_ptr<SpscRing>> rings;
  if (software) {
    for (unsigned w = 0; w < workers; ++w) rings.push_back(std::make_unique<SpscRing>(options.ring_capacity));
  }
  const unsigned first_worker_cpu = software ? 1 : 0;
  const TscClock clock;
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> dispatch_done{false};
  auto wait_for_go = [&] {
    ready.fetch_add(1, std::memory_order_acq_rel);
    while (!go.load(std::memory_order_acquire)) _mm_pause();
  };

  // Software steering reads the frames where the trace holds them: a copy the workers may be handed
  // writable buffers of (the meter writes none).
  PacketStore shared_frames(store.link_type());
  if (software) shared_frames = store;

  auto work = [&](unsigned w) {
    if (options.pin) pin_current_thread(first_worker_cpu + w);
    WorkerCounters& counters = report.workers[w];
    FlowMeter<Table> meter(*tables[shard(w)], records[shard(w)], options.aging, clock.now(), counters);
    StageClock stage_clock(true);
    DiscardingOutput out{stage_clock};
    BurstLoopCounters loop;
    // Hardware steering: the worker's packets in an arena of its own, laid out by the worker itself
    // (first touch places it near its core), as a NIC writes each queue into that queue's buffers.
    // Reading them out of the shared trace instead would make each core's prefetchers pull in the other
    // queues' packets too.
    std::optional<ReplaySource> replay;
    if (!software) replay.emplace(store, partition.packets[w]);
    wait_for_go();
    begin[w] = tsc_begin();
    Pacer pacer(options.pps_per_worker, begin[w]);
    if (!software) {
      PassReplay source(*replay, options.passes, clock, pacer);
      run_burst_loop(meter, source, out, options.burst, loop, stage_clock);
    } else {
      RingReplay source(*rings[w], shared_frames, dispatch_done, clock, pacer, counters.idle_polls);
      run_burst_loop(meter, source, out, options.burst, loop, stage_clock);
    }
    end[w] = tsc_end();
    counters.busy_cycles = end[w] - begin[w];
    counters.packets = loop.packets;
    counters.bursts = loop.bursts;
    counters.parse_drops = loop.parse_drops;
    counters.stage_cycles = stage_clock.cycles();
  };

  auto dispatch = [&] {
    if (options.pin) pin_current_thread(0);
    std::vector<std::vector<std::uint32_t>> pending(workers);
    for (auto& p : pending) p.reserve(options.burst);
    auto flush = [&](unsigned w) {
      std::span<const std::uint32_t> left(pending[w]);
      while (!left.empty()) left = left.subspan(rings[w]->push(left));
      pending[w].clear();
    };
    wait_for_go();
    for (unsigned pass = 0; pass < options.passes; ++pass) {
      for (std::size_t i = 0; i < store.size(); ++i) {
        const unsigned w = steering.queue_of(store[i].bytes, store.link_type());
        pending[w].push_back(static_cast<std::uint32_t>(i));
        if (pending[w].size() == options.burst) flush(w);
      }
    }
    for (unsigned w = 0; w < workers; ++w) flush(w);
    dispatch_done.store(true, std::memory_order_release);
  };

  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) threads.emplace_back(work, w);
  if (software) threads.emplace_back(dispatch);
  while (ready.load(std::memory_order_acquire) < threads.size()) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();

  const std::uint64_t first = *std::min_element(begin.begin(), begin.end());
  const std::uint64_t last = *std::max_element(end.begin(), end.end());
  report.seconds = static_cast<double>(last - first) / tsc_hz();
  for (unsigned w = 0; w < workers; ++w) {
    report.total += report.workers[w];
    report.worker_seconds[w] = static_cast<double>(end[w] - begin[w]) / tsc_hz();
  }
  for (std::size_t t = 0; t < tables.size(); ++t) {
    report.flows += tables[t]->size();
    report.capacity += tables[t]->capacity();
    report.memory_bytes += tables[t]->memory_bytes() + records[t].capacity() * sizeof(FlowRecord);
  }
  return report;
}

}  // namespace flowtrack
