// The one bound on worker threads that every command takes (run, live runs, bench nf, bench scale): the
// engine's (runtime/engine.hpp). A worker is a thread pinned to a core, and each holds its own tables, so
// a count far above the machine's cores only multiplies memory and contention.
#pragma once

#include <fmt/core.h>

#include <string_view>

#include "flowtrack/runtime/engine.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {

// Throws UserError "<command>: --workers must be in 1..64" unless 1 <= workers <= kMaxWorkers.
inline void check_workers(std::string_view command, unsigned workers) {
  if (workers == 0 || workers > kMaxWorkers) throw UserError(fmt::format("{}: --workers must be in 1..{}", command, kMaxWorkers));
}

}  // namespace flowtrack::cli
