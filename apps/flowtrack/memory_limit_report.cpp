#include "memory_limit_report.hpp"

#include <fmt/core.h>

namespace flowtrack::cli {

JsonObject memory_limit_fields(const MemoryLimit& limit) {
  return JsonObject()
      .set("memory_working_set_bytes", limit.working_set_bytes)
      .set("memory_dependent_cycles_per_line", limit.dependent_cycles_per_line)
      .set("memory_batched_cycles_per_line", limit.batched_cycles_per_line)
      .set("memory_batch", limit.batch);
}

std::string memory_limit_text(const MemoryLimit& limit) {
  return fmt::format("{:.1f} MiB: a dependent line fetch {:.1f} cycles ({:.1f} ns), in prefetched batches of {} {:.1f} cycles a line ({:.1f} ns)",
                     static_cast<double>(limit.working_set_bytes) / (1 << 20), limit.dependent_cycles_per_line,
                     limit.dependent_ns_per_line(), limit.batch, limit.batched_cycles_per_line, limit.batched_ns_per_line());
}

}  // namespace flowtrack::cli
