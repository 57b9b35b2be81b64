// What reaches a running worker from beside it: the only way in. The control plane (the control
// socket, health checks, a replay's schedule of pool changes) posts messages from any thread; the
// worker handles them between two bursts, never inside one (runtime/burst_loop.hpp), so a function sees
// a pool change as it sees a packet: on its own thread, in order.
//
// Each message gets a sequence number (1, 2, ... per mailbox); taken() reaches it once the worker has
// handled it, so a poster that must know (ctl answers "ok" only once every worker applied a change)
// waits for that. The worker's check between bursts is one relaxed load of `pending_`; the lock is
// taken only when there is mail.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <variant>
#include <vector>

#include "flowtrack/nf/pool_schedule.hpp"

namespace flowtrack {

// Asks the worker to leave a copy of its counters where the control plane reads them.
struct PublishRequest {};

// Work on the worker's own thread, between two bursts, from whoever owns the worker's function and
// alone knows its type: a snapshot of its state left where the control plane reads it (`ctl
// save-state`: the state file written while the run goes on), or taken by a NAT pair's sync link for a
// resynchronisation. `run` must not block: the worker's packets wait for it (except a hand-over's pause,
// hand_over.hpp, whose purpose is that the worker forwards nothing until the pause ends).
struct WorkerTask {
  std::function<void()> run;
};

using WorkerMessage = std::variant<PoolChange, PublishRequest, WorkerTask>;

class Mailbox {
 public:
  // Any thread. Returns the message's sequence number.
  std::uint64_t post(WorkerMessage message) {
    const std::lock_guard guard(mutex_);
    queue_.push_back(std::move(message));
    pending_.store(true, std::memory_order_release);
    return ++posted_;
  }

  // How many messages the worker has handled so far (acquire: what it did before is visible).
  std::uint64_t taken() const { return taken_.load(std::memory_order_acquire); }

  // What a source that waits for packets polls, so that mail posted meanwhile is handled at once.
  const std::atomic<bool>& pending() const { return pending_; }
  bool has_mail() const { return pending_.load(std::memory_order_relaxed); }

  // The worker's: handle(message) for every message posted so far, in order.
  template <class Handle>
  void drain(Handle&& handle) {
    {
      const std::lock_guard guard(mutex_);
      draining_.swap(queue_);
      pending_.store(false, std::memory_order_relaxed);
    }
    for (WorkerMessage& message : draining_) handle(message);
    taken_.fetch_add(draining_.size(), std::memory_order_release);
    draining_.clear();  // keeps its capacity: the next swap gives it back to posters
  }

 private:
  std::mutex mutex_;
  std::vector<WorkerMessage> queue_;  // guarded by mutex_
  std::uint64_t posted_ = 0;          // guarded by mutex_
  std::vector<WorkerMessage> draining_;  // the worker's only
  std::atomic<bool> pending_{false};
  std::atomic<std::uint64_t> taken_{0};
};

}  // namespace flowtrack
