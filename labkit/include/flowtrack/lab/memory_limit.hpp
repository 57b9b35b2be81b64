// The memory system's limit on the host a benchmark runs on, measured beside the benchmark: what one
// random cache-line read costs from an array as large as the benchmark's working set, in memory that the
// tables' allocator gives (huge pages where the kernel backs them). Two figures bound every lookup:
//   dependent: each read's address comes from the line read before (a pointer chase), so no two misses
//              overlap: the latency of one line fetch, the cost of a lookup that cannot be batched;
//   batched:   independent reads in batches, each batch's lines prefetched before any of them is read,
//              as the bulk lookups do: the throughput of line fetches, the floor under a bulk lookup.
// A table's cycles a lookup read against these say how many line fetches of this host's memory the
// lookup took: a figure measured on another host, with other caches and memory, compares by that ratio.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flowtrack/util/random.hpp"

namespace flowtrack {

struct MemoryLimitOptions {
  std::size_t working_set_bytes = std::size_t{64} << 20;
  std::size_t reads = std::size_t{1} << 20;  // per measurement
  std::size_t batch = 32;                    // lines prefetched together in the batched reads
  int reps = 3;                              // the figures are the medians of the repetitions
};

struct MemoryLimit {
  std::size_t working_set_bytes = 0;  // the array actually probed: a whole number of lines
  std::size_t batch = 0;
  double tsc_ghz = 0;
  double dependent_cycles_per_line = 0;
  double batched_cycles_per_line = 0;
  double dependent_ns_per_line() const { return dependent_cycles_per_line / tsc_ghz; }
  double batched_ns_per_line() const { return batched_cycles_per_line / tsc_ghz; }
};

// The pointer chase's order: next[i] is the index read after i, and following it from any index visits
// all n before it comes back (Sattolo's shuffle: a uniformly random permutation with a single cycle).
// With one cycle the chase can neither settle in a short loop that the caches hold nor be predicted.
std::vector<std::uint64_t> random_single_cycle(std::size_t n, Random& random);

// Allocates the working set, measures both figures and frees it. Throws std::invalid_argument for a
// working set under two lines, no reads or no batch, and std::bad_alloc when the memory is not there.
MemoryLimit probe_memory_limit(const MemoryLimitOptions& options);

}  // namespace flowtrack
