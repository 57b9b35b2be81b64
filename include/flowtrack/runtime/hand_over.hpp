// A restart of a live NAT or stateful LB as a hand-over between two processes (`flowtrack run --state
// FILE --take-over`): the new process does its slow start (the EAL, its ports, its functions' tables)
// while the running one still forwards, then takes the running one's state over its control socket.
// The forwarding gap is the state's save and load, not a process's stop and start.
//
//   new process                                   running process (its control socket)
//   EAL, ports (receiving: what they hold is       forwards
//   discarded before it serves), functions built
//   "hand-over"                              ->    every worker leaves its snapshot and pauses (forwards
//                                                  nothing); the state file written; "ok: paused, ..."
//   the state file loaded and accepted
//   "hand-over-commit"                       ->    "ok: ..."; stops without writing its state again,
//                                                  forwarding nothing more (what its workers held: dropped,
//                                                  counted as superseded)
//   its control socket opened, its workers
//   restore the state and serve
//
// Refusals leave the running process forwarding: it answers an error to a hand-over it cannot make
// (no state file, a worker that does not pause in time, a file it cannot write); the new process sends
// "hand-over-abort" when it refuses the state (another configuration, a corrupt file), and the running
// one resumes; a new process that says nothing more (it crashed, it hangs) leaves the running one to
// resume on its own after kHandOverPatience. A commit that comes later is refused, and the new process
// then ends without forwarding: only one of the two ever forwards from the state.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "flowtrack/util/time.hpp"
#include "flowtrack/runtime/mailbox.hpp"

namespace flowtrack {

// How long a paused process waits for the commit before it forwards again.
inline constexpr Nanos kHandOverPatience = 3 * kNanosPerSecond;

// The running process's side: its workers paused for a hand-over, then resumed or stopped.
class WorkerPause {
 public:
  // The task worker w runs between two bursts: leave() (its snapshot), then nothing more (it forwards
  // nothing) until resume(). A task of a pause that has ended already returns at once.
  WorkerTask task(std::function<void()> leave);
  // Starts a pause: the tasks made from here on belong to it.
  void begin(unsigned workers);
  // Waits until each of the workers has left its snapshot and paused, or `patience` has passed, or
  // `given_up()` says so; true if all have.
  bool wait_paused(Nanos patience, const std::function<bool()>& given_up) const;
  bool paused() const { return pause_.load(std::memory_order_acquire) != 0; }
  // Ends the pause: the workers go on (forwarding, or stopping if the engine stops). What they did
  // before (their snapshots) is visible to whoever saw them paused.
  void resume() { pause_.store(0, std::memory_order_release); }
  // The workers' ports transmit nothing once this is set (DpdkPorts::mute_when): a committed hand-over.
  void supersede() { superseded_.store(true, std::memory_order_release); }
  const std::atomic<bool>& superseded() const { return superseded_; }

 private:
  std::atomic<std::uint64_t> pause_{0};  // the pause under way (0: none)
  std::uint64_t last_pause_ = 0;         // the control plane's own
  std::atomic<unsigned> paused_{0};      // workers paused in the pause under way
  unsigned expected_ = 0;
  std::atomic<bool> superseded_{false};
};

// The new process's side. Each throws StateRefused (state_store.hpp) with the running process's answer
// or the reason it cannot be reached.
//   ask_for_state: "hand-over" to the process behind `socket`; returns once it has paused and written
//     its state to `state_path` (the same file: a process writing elsewhere is told to resume).
//   commit_hand_over: "hand-over-commit"; returns once the running process has stopped forwarding.
//   abort_hand_over: "hand-over-abort" (never throws: a process that does not hear it resumes on its own).
void ask_for_state(const std::string& socket, const std::string& state_path);
void commit_hand_over(const std::string& socket);
void abort_hand_over(const std::string& socket) noexcept;

}  // namespace flowtrack
