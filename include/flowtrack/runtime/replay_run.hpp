// A network function over a trace on N workers, through the engine (runtime/engine.hpp): what `flowtrack
// run` and `flowtrack bench nf` are configurations of. By default (DispatchPolicy::partition) packets
// reach workers by RSS with the symmetric key, computed before the run, so each connection stays on one
// worker, in trace order: each worker lays its packets out in a replay arena of its own
// (replay_source.hpp: first touch near its core, before the start gate) and replays it with the trace's
// timestamps as the clock. Dispatched (rss or laps), a dispatcher thread on core 0 picks each packet's
// worker during the run and the workers (cores 1..N) take their packets from rings instead
// (dispatched_replay.hpp). Cycles are TSC time of each worker's loop (parse, function, expiry); the
// output is laid out after the clock stops.
//
// The functions come from a sharing policy (sharing.hpp: one per worker, or one under a lock), and a
// schedule of pool changes, if any, is played into each worker's mailbox (scheduled_source.hpp), its
// times counting from the first packet that worker replays. With `check` the verdicts pass through a
// consistency check (consistency_check.hpp), for functions with a pool of backends (services()).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/lb_stats.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/runtime/consistency_check.hpp"
#include "flowtrack/runtime/dispatched_replay.hpp"
#include "flowtrack/runtime/engine.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/runtime/scheduled_source.hpp"
#include "flowtrack/runtime/verdict_log.hpp"

namespace flowtrack {

struct ReplayOptions {
  std::size_t burst = kDefaultBurst;  // 1: the per-packet path
  bool keep_output = true;            // lay the output out (a run that writes it, a test that compares it)
  bool clock_stages = false;          // each stage's cycles
  DispatchOptions dispatch;           // how packets reach the workers
  PoolChangeSchedule changes;         // played into every worker's mailbox
  std::optional<Nanos> check;         // the consistency check, with this handshake timeout
};

// What one worker did, and what its function knows at the end.
struct WorkerReport {
  WorkerCounters counters;
  PacketStore out{LinkType::ethernet};  // when the run keeps its output
  std::uint64_t forwarded = 0, replied = 0;
  std::size_t live_connections = 0;  // at the end
  std::size_t peak_connections = 0;  // the most alive at once
  std::map<std::string, std::uint64_t> backends;         // name -> connections (lb, concury) or packets (slb)
  std::map<std::string, std::uint64_t> function_counts;  // what a function counts of its own (concury)
  LbStats lb_stats;  // a load balancer's per-VIP and per-backend figures (nf/lb_stats.hpp)
  ConsistencyCounts check;
};

// `functions`: OnePerWorker or OneUnderLock (sharing.hpp) for partition.packets.size() workers;
// collect(const Nf&, WorkerReport&) adds what an instance knows (live connections, backends).
template <class Functions, class Collect>
std::vector<WorkerReport> replay(const PacketStore& trace, const PacketPartition& partition, Functions& functions,
                                 const ReplayOptions& options, Collect&& collect) {
  const auto workers = static_cast<unsigned>(partition.packets.size());
  const bool dispatched = options.dispatch.policy != DispatchPolicy::partition;
  Engine engine({.workers = workers,
                 .burst = options.burst,
                 .pin = PinPolicy::from_core(dispatched ? 1 : 0),
                 .clock_stages = options.clock_stages,
                 .on_worker_start = {}});
  std::vector<WorkerReport> reports(workers);
  std::optional<DispatchedReplay> dispatch;
  if (dispatched) dispatch.emplace(trace, arrival_order(partition), partition.tags, workers, options.dispatch);

  // Worker w over `source`, whose packets lie in `arena`. A schedule of pool changes wraps the source;
  // without one the worker reads its source directly (the wrapper costs a few instructions a packet).
  const auto serve = [&](unsigned w, auto& source, const ReplaySource& arena, Nanos start, StartGate& gate) {
    auto& nf = functions.instance(w, start);
    VerdictLog log(arena);
    WorkerReport& report = reports[w];
    const auto checked_serve = [&](auto& scheduled) -> ConsistencyCounts {
      if constexpr (requires { nf.services(); }) {
        if (options.check) {
          ConsistencyCheck check(log, nf.services(), arena.link_type(), *options.check);
          gate.pass();
          engine.serve(w, nf, scheduled, check);
          return check.counts();
        }
      }
      gate.pass();
      engine.serve(w, nf, scheduled, log);
      return {};
    };
    if (options.changes.empty()) {
      report.check = checked_serve(source);
    } else {
      ScheduledSource scheduled(source, options.changes, engine.mailbox(w));
      report.check = checked_serve(scheduled);
    }
    report.forwarded = log.count(Verdict::forward) + log.held_count();
    report.replied = log.count(Verdict::reply);
    report.out = PacketStore(arena.link_type());
    if (options.keep_output) log.write_to(arena, report.out);
  };
  const std::function<void(unsigned, StartGate&)> worker = [&](unsigned w, StartGate& gate) {
    if (dispatched) {
      RingSource source = dispatch->source(w, engine.counters(w).idle_polls);
      serve(w, source, dispatch->arena(), dispatch->first_time(), gate);
    } else {
      ReplaySource source(trace, partition.packets[w]);
      serve(w, source, source, source.first_time(), gate);
    }
  };
  std::vector<std::function<void(StartGate&)>> beside;
  if (dispatched) {
    beside.push_back([&](StartGate& gate) {
      pin_current_thread(0);
      gate.pass();
      dispatch->dispatch(options.burst);
    });
  }
  engine.run(worker, beside);

  std::vector<WorkerCounters> dispatch_counters = dispatched ? dispatch->counters() : std::vector<WorkerCounters>(workers);
  for (unsigned w = 0; w < workers; ++w) {
    reports[w].counters = engine.counters(w);
    reports[w].counters.ring_full = dispatch_counters[w].ring_full;
    reports[w].counters.migrations_in = dispatch_counters[w].migrations_in;
    reports[w].counters.out_of_order = dispatch_counters[w].out_of_order;
  }
  functions.each_result([&](unsigned w, const auto& nf) {
    reports[w].counters.function = nf.counters();
    collect(nf, reports[w]);
  });
  return reports;
}

// The outputs of every worker, merged in time order.
PacketStore merge_in_time_order(const std::vector<WorkerReport>& reports, LinkType link);

// Packets per second over the slowest worker's time (all workers run at once).
double aggregate_mpps(const std::vector<WorkerReport>& reports);
// Worker cycles per packet, all workers together.
double cycles_per_packet(const std::vector<WorkerReport>& reports);
// Cycles per packet of one stage, all workers together (a run that clocked its stages).
double stage_cycles_per_packet(const std::vector<WorkerReport>& reports, NfStage stage);

// The earliest time any worker of the partition replays (a shared instance's clock starts there).
Nanos first_time(const PacketStore& trace, const PacketPartition& partition);

}  // namespace flowtrack
