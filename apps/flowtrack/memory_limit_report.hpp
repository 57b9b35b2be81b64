// How the benchmarks print the memory system's limit (lab/memory_limit.hpp) beside their figures: the
// same JSON fields and the same sentence in `bench table` and `bench nf`, so that a reader (or a script
// over both outputs) finds the limit under one name wherever a cycles figure is stated against it.
#pragma once

#include <string>

#include "flowtrack/lab/memory_limit.hpp"
#include "json_line.hpp"

namespace flowtrack::cli {

// memory_working_set_bytes, memory_dependent_cycles_per_line, memory_batched_cycles_per_line and
// memory_batch, to merge into a figure's JSON object.
JsonObject memory_limit_fields(const MemoryLimit& limit);

// "<MiB> MiB: a dependent line fetch <c> cycles (<ns> ns), in prefetched batches of <b> <c> cycles a
// line (<ns> ns)".
std::string memory_limit_text(const MemoryLimit& limit);

}  // namespace flowtrack::cli
