// A network function live on DPDK ports (runtime/dpdk_ports.hpp): the same burst loop as a replay
// (burst_loop.hpp), cut into ticks of wall-clock time. Between ticks the function ages out what went
// idle by the wall clock (a quiet port still ends its connections on time), the ports refresh their
// next hops, and the caller gets control (stats, the stop request).
#pragma once

#include <atomic>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/dpdk_ports.hpp"
#include "flowtrack/runtime/stage_clock.hpp"

namespace flowtrack {

struct LiveLoopOptions {
  std::size_t burst = kDefaultBurst;
  Nanos tick = 100 * kNanosPerMilli;
};

// Runs until `stop` is set (checked every tick). on_tick(now) runs after each tick's housekeeping.
template <NetworkFunction Nf, class OnTick>
void run_live(Nf& nf, DpdkPorts& ports, const LiveLoopOptions& options, const std::atomic<bool>& stop,
              WorkerCounters& counters, OnTick&& on_tick) {
  StageClock clock(false);
  while (!stop.load(std::memory_order_relaxed)) {
    ports.set_deadline(DpdkPorts::now() + options.tick);
    run_burst_loop(nf, ports, ports, options.burst, counters, clock);
    const Nanos now = DpdkPorts::now();
    nf.expire(now, kDefaultExpireBudget);
    ports.refresh_neighbours(now);
    on_tick(now);
  }
}

}  // namespace flowtrack
