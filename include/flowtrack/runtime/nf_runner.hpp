// Running a network function over a trace on N workers: what `flowtrack run` and `flowtrack bench nf`
// share. By default (DispatchPolicy::partition) packets reach workers by RSS with the symmetric key,
// computed before the run, so each connection stays on one worker, in trace order. Each worker pins
// itself, lays its packets out in a replay arena of its own (replay_source.hpp: first touch near its
// core, before the clock), waits for the others, then runs the burst loop (burst_loop.hpp) over it with
// the trace's timestamps as the clock. Cycles are TSC time of the loop: parse, the function, expiry;
// the output is laid out after the clock stops.
//
// Dispatched (options.dispatch: rss or laps), a dispatcher thread on core 0 picks each packet's worker
// during the run and the workers (cores 1..N) take their packets from rings instead
// (dispatched_run.hpp); the function, the burst loop and the output are the same.
//
// Two ways to give the workers the function (NfScaling):
//  - sharded: one instance per worker, nothing shared ([lb-flowtables]'s per-core duplication; a NAT instance
//    owns its slice of the port range);
//  - spinlock: one instance for all workers, every burst through it under one Spinlock ([lb-flowtables]'s
//    global lock, [mt-nat]'s global spinlock NAT; with bursts of one, a lock per packet). Workers replay
//    their queues concurrently, each at its own pace through trace time; the instance is shown a clock
//    that never goes back (the latest time any worker has reached), as its aging requires.
#pragma once

#include <algorithm>
#include <array>
#include <barrier>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/lb_stats.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/cpu.hpp"
#include "flowtrack/runtime/dispatched_run.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/runtime/stage_clock.hpp"
#include "flowtrack/runtime/verdict_log.hpp"
#include "flowtrack/util/spinlock.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

// What one worker did.
struct WorkerResult {
  PacketStore out{LinkType::ethernet};  // filled when the run keeps its output
  std::uint64_t packets = 0, forwarded = 0, replied = 0, cycles = 0;
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};
  std::array<std::uint64_t, kNfStageCount> stage_cycles{};  // when the run clocks its stages
  NfCounters counters;
  std::size_t live_connections = 0;  // at the end
  std::size_t peak_connections = 0;  // the most alive at once
  std::map<std::string, std::uint64_t> backends;  // name -> connections (lb, concury) or packets (slb)
  std::map<std::string, std::uint64_t> function_counts;  // what a function counts of its own (concury)
  LbStats lb_stats;  // a load balancer's per-VIP and per-backend figures (nf/lb_stats.hpp)
  WorkerDispatchCounters dispatch;  // a dispatched run's
};

// How the workers run: packets per burst (1: the per-packet path), whether the output is laid out (a
// run that writes it, a test that compares it), whether each stage's cycles are clocked, and how
// packets reach them (dispatch: the partition before the run, or a live dispatcher).
struct NfRunOptions {
  std::size_t burst = 32;
  bool keep_output = true;
  bool clock_stages = false;
  DispatchOptions dispatch;
};

// `buffers`: the arena the source's packets lie in (the source itself when it replays its own).
template <NetworkFunction Nf, class Source>
void run_worker(Nf& nf, Source& source, const ReplaySource& buffers, const NfRunOptions& options, WorkerResult& result) {
  StageClock clock(options.clock_stages);
  VerdictLog log(buffers, clock);
  BurstLoopCounters loop;
  const std::uint64_t start = tsc_begin();
  run_burst_loop(nf, source, log, options.burst, loop, clock);
  result.cycles = tsc_end() - start;
  result.packets = loop.packets;
  result.parse_drops = loop.parse_drops;
  result.stage_cycles = clock.cycles();
  result.counters = nf.counters();
  result.forwarded = log.count(Verdict::forward) + log.held_count();
  result.replied = log.count(Verdict::reply);
  result.out = PacketStore(source.link_type());
  if (options.keep_output) log.write_to(buffers, result.out);
}

enum class NfScaling : std::uint8_t { sharded, spinlock };

// The spinlock scaling's view of the one shared instance, one per worker.
template <NetworkFunction Nf>
class LockedNf {
 public:
  struct Shared {
    std::unique_ptr<Nf> nf;
    alignas(64) Spinlock lock;
    Nanos clock = 0;  // the latest time shown to nf; guarded by lock
  };

  explicit LockedNf(Shared& shared) : shared_(shared) {}

  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    std::lock_guard guard(shared_.lock);
    for (NfPacket& packet : burst) packet.time = advance(packet.time);
    shared_.nf->process_burst(burst, out);
  }
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) {
    std::lock_guard guard(shared_.lock);
    return shared_.nf->expire(advance(now), budget);
  }
  // The instance's counters belong to no one worker: the runner reports them once, after the run.
  NfCounters counters() const { return {}; }

 private:
  Nanos advance(Nanos now) { return shared_.clock = std::max(shared_.clock, now); }

  Shared& shared_;
};

// make_nf(instance, instances, start) builds instance `instance` of `instances` whose clock starts at
// `start`; collect(nf, result) adds what the instance knows (live connections, backends) to a result.
// With spinlock scaling there is one instance; its counters and collect() go to worker 0's result.
template <class MakeNf, class Collect>
std::vector<WorkerResult> run_workers(const PacketStore& trace, const PacketPartition& partition, unsigned workers,
                                      NfScaling scaling, const NfRunOptions& options, MakeNf&& make_nf, Collect&& collect) {
  using Nf = typename std::invoke_result_t<MakeNf&, unsigned, unsigned, Nanos>::element_type;
  std::vector<WorkerResult> results(workers);
  typename LockedNf<Nf>::Shared shared;
  if (scaling == NfScaling::spinlock) {
    Nanos start = ~Nanos{0};
    for (const auto& queue : partition.packets) {
      if (!queue.empty()) start = std::min(start, trace[queue.front()].timestamp_ns);
    }
    shared.clock = start == ~Nanos{0} ? 0 : start;
    shared.nf = make_nf(0u, 1u, shared.clock);
  }
  const bool dispatched = options.dispatch.policy != DispatchPolicy::partition;
  std::optional<DispatchedRun> dispatch;
  if (dispatched) dispatch.emplace(trace, partition, workers, options.dispatch);
  std::barrier ready(static_cast<std::ptrdiff_t>(workers + (dispatched ? 1 : 0)));
  // A sharded instance starts its clock at the first packet it may see.
  auto serve = [&](unsigned w, auto& source, const ReplaySource& buffers, Nanos start) {
    if (scaling == NfScaling::spinlock) {
      LockedNf<Nf> view(shared);
      ready.arrive_and_wait();
      run_worker(view, source, buffers, options, results[w]);
    } else {
      auto nf = make_nf(w, workers, start);
      ready.arrive_and_wait();
      run_worker(*nf, source, buffers, options, results[w]);
      collect(*nf, results[w]);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      if (dispatched) {
        pin_current_thread(w + 1);
        RingSource source = dispatch->source(w);
        serve(w, source, dispatch->buffers(), dispatch->first_time());
      } else {
        pin_current_thread(w);
        ReplaySource source(trace, partition.packets[w]);
        serve(w, source, source, source.first_time());
      }
    });
  }
  if (dispatched) {
    threads.emplace_back([&] {
      pin_current_thread(0);
      ready.arrive_and_wait();
      dispatch->dispatch(options.burst);
    });
  }
  for (auto& t : threads) t.join();
  if (dispatched) {
    const std::vector<WorkerDispatchCounters> counters = dispatch->counters();
    for (unsigned w = 0; w < workers; ++w) results[w].dispatch = counters[w];
  }
  if (scaling == NfScaling::spinlock) {
    results[0].counters = shared.nf->counters();
    collect(*shared.nf, results[0]);
  }
  return results;
}

inline PacketStore merge_in_time_order(std::vector<WorkerResult>& results, LinkType link) {
  std::vector<std::pair<std::uint64_t, std::pair<std::size_t, std::size_t>>> order;  // (time, (worker, index))
  std::size_t bytes = 0;
  for (std::size_t w = 0; w < results.size(); ++w) {
    for (std::size_t i = 0; i < results[w].out.size(); ++i) order.push_back({results[w].out[i].timestamp_ns, {w, i}});
    bytes += results[w].out.arena_bytes();
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  PacketStore merged(link);
  merged.reserve(order.size(), bytes);
  for (const auto& [time, where] : order) merged.append(results[where.first].out[where.second]);
  return merged;
}

// Packets per second over the slowest worker's time (all workers run at once).
inline double aggregate_mpps(const std::vector<WorkerResult>& results) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerResult& r : results) {
    packets += r.packets;
    cycles = std::max(cycles, r.cycles);
  }
  return cycles > 0 ? static_cast<double>(packets) * tsc_hz() / static_cast<double>(cycles) / 1e6 : 0;
}

// Worker cycles per packet, all workers together.
inline double cycles_per_packet(const std::vector<WorkerResult>& results) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerResult& r : results) {
    packets += r.packets;
    cycles += r.cycles;
  }
  return packets > 0 ? static_cast<double>(cycles) / static_cast<double>(packets) : 0;
}

// Cycles per packet of one stage, all workers together (a run that clocked its stages).
inline double stage_cycles_per_packet(const std::vector<WorkerResult>& results, NfStage stage) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerResult& r : results) {
    packets += r.packets;
    cycles += r.stage_cycles[static_cast<std::size_t>(stage)];
  }
  return packets > 0 ? static_cast<double>(cycles) / static_cast<double>(packets) : 0;
}

}  // namespace flowtrack
