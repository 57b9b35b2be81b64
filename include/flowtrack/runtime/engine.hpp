// The engine: the one way a packet gets from a source, through a network function, to an output, for
// every command (run, bench nf, bench scale, run --dpdk) and every library user.
//
// It starts N workers (runtime/worker_threads.hpp: pinned by a stated policy, registered with the EAL
// when the source is DPDK ports, started together) and on each runs the burst loop
// (runtime/burst_loop.hpp) over any source into any output, in ticks:
//
//   source   ReplaySource (a worker's own arena), RingSource (fed by the one Dispatcher), ScheduledSource
//            (a replay's pool changes), DpdkPorts; the lab's PassReplay (passes, pacing, the run's clock)
//   output   VerdictLog (a replay's verdicts), DpdkPorts, ConsistencyCheck (wraps any); the lab's
//            DiscardingOutput
//
// Each worker has one counter record (worker_counters.hpp) and a mailbox (mailbox.hpp), the only way
// anything reaches it while it runs: between two bursts it applies pool changes (to a function that
// TakesPoolChanges), leaves copies of its counters for whoever asked, and runs the tasks posted to it
// (mailbox.hpp: a snapshot of its function's state for `ctl save-state` or a NAT pair's resync). The
// control plane (the control socket, health checks, telemetry, a NAT pair's sync link) runs beside the
// workers, never on them.
//
// A source is a class with link_type(), next(burst) (0: nothing now, or nothing ever) and done() (no
// packet will ever come). A source that ticks (live ports) also has tick(): called before each tick's
// bursts, it does its housekeeping, starts the tick and returns the wall clock, by which the function
// then ages what went idle (a quiet port still ends its connections on time); its next() returns 0 when
// the tick is over. The worker stops when its source is done or the engine is told to stop.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/mailbox.hpp"
#include "flowtrack/runtime/stage_clock.hpp"
#include "flowtrack/runtime/worker_counters.hpp"
#include "flowtrack/runtime/worker_threads.hpp"
#include "flowtrack/util/assert.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

template <class Source>
concept TickingSource = requires(Source& source) {
  { source.tick() } -> std::same_as<Nanos>;
};

// The most workers an engine runs (every command's --workers bound).
inline constexpr unsigned kMaxWorkers = 64;

struct EngineOptions {
  unsigned workers = 1;
  std::size_t burst = kDefaultBurst;
  PinPolicy pin;
  bool clock_stages = false;  // each stage's cycles (a clock read per stage and burst)
  std::function<void(unsigned worker)> on_worker_start;  // on the worker's thread, first thing (EAL registration)
};

class Engine {
 public:
  // Throws std::invalid_argument for a worker count or burst size out of range.
  explicit Engine(EngineOptions options);

  const EngineOptions& options() const { return options_; }
  unsigned workers() const { return options_.workers; }
  Mailbox& mailbox(unsigned worker) { return *mailboxes_[worker]; }
  // The worker's own record: read it once run() has returned (or from a copy the worker published).
  const WorkerCounters& counters(unsigned worker) const { return counters_[worker]; }
  WorkerCounters& counters(unsigned worker) { return counters_[worker]; }

  // Any thread: every worker ends at its next tick (a replay's workers run to the end of their source).
  void stop() { stop_.store(true, std::memory_order_relaxed); }
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  // Runs worker(w, gate) on each worker's thread and each of `beside` (a dispatcher) on threads of their
  // own; every body passes the gate when ready. A thread that throws stops the engine; the exception is
  // rethrown here once all have ended.
  void run(const std::function<void(unsigned, StartGate&)>& worker, std::span<const std::function<void(StartGate&)>> beside = {});

  // On worker w's thread: the burst loop over `source` into `out` until the source is done or the
  // engine stops, the mail handled between bursts. publish(counters) runs on the worker's thread for
  // each PublishRequest, with the worker's record (the function's counters read into it) as it is then;
  // each WorkerTask's run(), between two bursts (no burst half done).
  // The worker's busy cycles count from the call to its return.
  template <NetworkFunction Nf, class Source, PacketOutput Out, class Publish>
  void serve(unsigned w, Nf& nf, Source& source, Out& out, Publish&& publish) {
    WorkerCounters& counters = counters_[w];
    Mailbox& mailbox = *mailboxes_[w];
    StageClock clock(options_.clock_stages);
    const auto handle = [&](WorkerMessage& message) {
      if (const PoolChange* change = std::get_if<PoolChange>(&message)) {
        if constexpr (TakesPoolChanges<Nf>) {
          nf.apply(*change);
        } else {
          FLOWTRACK_ASSERT(false, "the control plane posts pool changes only to functions that take them");
        }
      } else if (const WorkerTask* task = std::get_if<WorkerTask>(&message)) {
        task->run();
      } else {
        counters.function = nf.counters();
        publish(std::as_const(counters));
      }
    };
    const auto between_bursts = [&] {
      if (mailbox.has_mail()) mailbox.drain(handle);
    };
    const std::uint64_t start = tsc_begin();
    for (;;) {
      if constexpr (TickingSource<Source>) nf.expire(source.tick(), kDefaultExpireBudget);
      between_bursts();
      run_burst_loop(nf, source, out, options_.burst, counters, clock, between_bursts);
      if (source.done() || stopping()) break;
    }
    between_bursts();
    counters.busy_cycles = tsc_end() - start;
    counters.stage_cycles = clock.cycles();
    counters.function = nf.counters();
  }

  template <NetworkFunction Nf, class Source, PacketOutput Out>
  void serve(unsigned w, Nf& nf, Source& source, Out& out) {
    serve(w, nf, source, out, [](const WorkerCounters&) {});
  }

 private:
  EngineOptions options_;
  std::vector<std::unique_ptr<Mailbox>> mailboxes_;
  std::vector<WorkerCounters> counters_;
  std::atomic<bool> stop_{false};
};

}  // namespace flowtrack
