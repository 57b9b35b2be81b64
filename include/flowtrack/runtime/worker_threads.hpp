// The engine's threads (runtime/engine.hpp): N workers and any threads beside them (a dispatcher), all
// started together. Each worker is pinned by the policy (cpu.hpp) and passed through the start hook on
// its own thread (a DPDK run registers it with the EAL there, so it gets an lcore id and its mempool
// cache); then it prepares what it needs near its core (its function, its replay arena) and passes the
// start gate, which opens once every thread has reached it: a timed window after the gate holds the
// work only.
//
// A thread that throws is caught: if it had not passed the gate it leaves it (the others do not wait
// for it), `on_error` runs at once (the engine stops the others), and the first exception is rethrown
// on the caller's thread once every thread has ended.
#pragma once

#include <barrier>
#include <functional>
#include <span>

#include "flowtrack/runtime/cpu.hpp"

namespace flowtrack {

// Every engine thread passes it once; it opens when all have reached it (or left).
class StartGate {
 public:
  explicit StartGate(std::ptrdiff_t threads) : barrier_(threads) {}
  // Waits until every thread has reached the gate; later calls on the same thread return at once.
  void pass() {
    if (passed_) return;
    passed_ = true;
    barrier_.arrive_and_wait();
  }
  // A thread that will not pass (it failed first): the gate stops waiting for it.
  void leave() {
    if (passed_) return;
    passed_ = true;
    barrier_.arrive_and_drop();
  }

 private:
  std::barrier<> barrier_;
  static thread_local bool passed_;  // each engine thread is new, so it starts false
};

struct WorkerThreadsOptions {
  unsigned workers = 1;
  PinPolicy pin;
  std::function<void(unsigned worker)> on_start;  // on the worker's thread, after pinning, first thing
  std::function<void()> on_error;                 // any thread, when one throws
};

// Runs worker(w, gate) for w in 0..workers-1 and each of beside(gate) on threads of their own; each body
// passes the gate (gate.pass()) when it is ready to start. Returns when all have returned.
void run_worker_threads(const WorkerThreadsOptions& options, const std::function<void(unsigned, StartGate&)>& worker,
                        std::span<const std::function<void(StartGate&)>> beside = {});

}  // namespace flowtrack
