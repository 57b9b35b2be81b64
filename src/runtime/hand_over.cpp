#include "flowtrack/runtime/hand_over.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <thread>

#include "flowtrack/runtime/control_socket.hpp"
#include "flowtrack/runtime/dpdk_ports.hpp"
#include "flowtrack/runtime/state_store.hpp"

namespace flowtrack {
namespace {

// How long the new process waits for each answer: the running one answers "hand-over" once its workers
// have paused (within a tick) and its state is written (a second for a million connections).
constexpr std::chrono::milliseconds kAnswerWait{10'000};

std::string call(const std::string& socket, std::string_view request) {
  try {
    return control_call(socket, request, kAnswerWait);
  } catch (const std::exception& e) {
    throw StateRefused(fmt::format("--take-over: {}: {}", request, e.what()));
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::weakly_canonical(a, error) == std::filesystem::weakly_canonical(b, error) && !error;
}

}  // namespace

void WorkerPause::begin(unsigned workers) {
  expected_ = workers;
  paused_.store(0, std::memory_order_relaxed);
  pause_.store(++last_pause_, std::memory_order_release);
}

WorkerTask WorkerPause::task(std::function<void()> leave) {
  return WorkerTask{[this, leave = std::move(leave), pause = last_pause_] {
    if (pause_.load(std::memory_order_acquire) != pause) return;  // a pause that ended before the worker took it
    leave();
    paused_.fetch_add(1, std::memory_order_release);
    while (pause_.load(std::memory_order_acquire) == pause) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }};
}

bool WorkerPause::wait_paused(Nanos patience, const std::function<bool()>& given_up) const {
  const Nanos until = DpdkPorts::now() + patience;
  while (paused_.load(std::memory_order_acquire) < expected_) {
    if (DpdkPorts::now() >= until || given_up()) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

void ask_for_state(const std::string& socket, const std::string& state_path) {
  const std::string answer = call(socket, "hand-over");
  if (!answer.starts_with("ok")) throw StateRefused(fmt::format("--take-over: the running process refused the hand-over: {}", answer));
  // "ok: paused; state of N connections written to PATH"
  const std::size_t to = answer.rfind(" written to ");
  if (to == std::string::npos || !same_file(answer.substr(to + 12), state_path)) {
    abort_hand_over(socket);
    throw StateRefused(fmt::format("--take-over: the running process wrote its state elsewhere ({}), not to --state {}", answer, state_path));
  }
}

void commit_hand_over(const std::string& socket) {
  const std::string answer = call(socket, "hand-over-commit");
  if (!answer.starts_with("ok")) throw StateRefused(fmt::format("--take-over: the running process did not hand over: {}", answer));
}

void abort_hand_over(const std::string& socket) noexcept {
  try {
    control_call(socket, "hand-over-abort", kAnswerWait);
  } catch (const std::exception&) {  // it resumes on its own after kHandOverPatience
  }
}

}  // namespace flowtrack
