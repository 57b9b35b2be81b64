// FLOWTRACK_ASSERT(condition, message): checks an invariant that the code states in a comment, in the
// sanitizer builds (FLOWTRACK_SANITIZED, set by CMake with FLOWTRACK_SANITIZE) where every test also
// runs; in release builds it compiles to nothing, so it may sit on hot paths. A failed check prints the
// invariant and where, then aborts, which the sanitizer runtime reports with a stack trace.
#pragma once

#ifdef FLOWTRACK_SANITIZED
#include <cstdio>
#include <cstdlib>

namespace flowtrack::detail {
[[noreturn]] inline void assertion_failed(const char* condition, const char* message, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", file, line, message, condition);
  std::abort();
}
}  // namespace flowtrack::detail

#define FLOWTRACK_ASSERT(condition, message) \
  ((condition) ? static_cast<void>(0) : ::flowtrack::detail::assertion_failed(#condition, message, __FILE__, __LINE__))
#else
#define FLOWTRACK_ASSERT(condition, message) static_cast<void>(0)
#endif
