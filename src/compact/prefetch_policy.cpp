#include "flowtrack/compact/internal/prefetch_policy.hpp"

#include <unistd.h>

namespace flowtrack::compact {

namespace {
std::size_t l2_bytes() {
  const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{512} << 10;
}
}  // namespace

bool prefetch_pays(std::size_t bytes) {
  static const std::size_t half_l2 = l2_bytes() / 2;
  return bytes > half_l2;
}

}  // namespace flowtrack::compact
