#include "flowtrack/runtime/worker_threads.hpp"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flowtrack {

thread_local bool StartGate::passed_ = false;

void run_worker_threads(const WorkerThreadsOptions& options, const std::function<void(unsigned, StartGate&)>& worker,
                        std::span<const std::function<void(StartGate&)>> beside) {
  StartGate gate(static_cast<std::ptrdiff_t>(options.workers + beside.size()));
  std::mutex error_lock;
  std::exception_ptr first_error;
  // Each thread's body, caught: a thread that fails before the gate leaves it, so no other waits there.
  const auto guarded = [&](const std::function<void()>& body) {
    try {
      body();
      gate.pass();  // a body that returned without passing it (nothing to do) must not hold the others
    } catch (...) {
      gate.leave();
      {
        const std::lock_guard guard(error_lock);
        if (!first_error) first_error = std::current_exception();
      }
      if (options.on_error) options.on_error();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(options.workers + beside.size());
  for (unsigned w = 0; w < options.workers; ++w) {
    threads.emplace_back([&, w] {
      guarded([&] {
        options.pin.pin(w);
        if (options.on_start) options.on_start(w);
        worker(w, gate);
      });
    });
  }
  for (const auto& body : beside) {
    threads.emplace_back([&] { guarded([&] { body(gate); }); });
  }
  for (std::thread& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace flowtrack
