#pragma once
// Running one task on every worker of an engine and waiting until each has taken its own: how a thread
// beside the workers reads what only the workers may touch (a NAT's snapshot, an LB's exceptions).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "flowtrack/runtime/engine.hpp"

namespace flowtrack {

// Posts worker w the task task_for(w), for every w < workers, then waits until each worker has taken its
// task (between two of its bursts, or at its next tick). False: `stop` or the engine's own stop came first,
// and some task may not have run yet (nor be waited for).
template <class TaskFor>
bool run_on_every_worker(Engine& engine, unsigned workers, TaskFor task_for, const std::atomic<bool>& stop) {
  std::vector<std::uint64_t> posted(workers);
  for (unsigned w = 0; w < workers; ++w) posted[w] = engine.mailbox(w).post(task_for(w));
  for (unsigned w = 0; w < workers; ++w) {
    while (engine.mailbox(w).taken() < posted[w]) {
      if (stop.load(std::memory_order_relaxed) || engine.stopping()) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return true;
}

}  // namespace flowtrack
