#include "flowtrack/runtime/engine.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace flowtrack {

Engine::Engine(EngineOptions options) : options_(std::move(options)) {
  if (options_.workers == 0 || options_.workers > kMaxWorkers) {
    throw std::invalid_argument(fmt::format("the engine runs 1 to {} workers, not {}", kMaxWorkers, options_.workers));
  }
  if (options_.burst == 0 || options_.burst > kMaxBurst) {
    throw std::invalid_argument(fmt::format("bursts of 1 to {} packets, not {}", kMaxBurst, options_.burst));
  }
  counters_.resize(options_.workers);
  for (unsigned w = 0; w < options_.workers; ++w) mailboxes_.push_back(std::make_unique<Mailbox>());
}

void Engine::run(const std::function<void(unsigned, StartGate&)>& worker, std::span<const std::function<void(StartGate&)>> beside) {
  run_worker_threads({.workers = options_.workers, .pin = options_.pin, .on_start = options_.on_worker_start, .on_error = [this] { stop(); }},
                     worker, beside);
}

}  // namespace flowtrack
