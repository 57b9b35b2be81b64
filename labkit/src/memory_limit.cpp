#include "flowtrack/lab/memory_limit.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "flowtrack/table/huge_page_allocator.hpp"
#include "flowtrack/util/random.hpp"
#include "flowtrack/util/statistics.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {
namespace {

constexpr std::size_t kLineBytes = 64;

// One cache line; `next` is the index of the line the pointer chase reads after this one.
struct alignas(kLineBytes) Line {
  std::uint64_t next;
};
static_assert(sizeof(Line) == kLineBytes);

using Lines = std::vector<Line, HugePageAllocator<Line>>;

// The sink that keeps the compiler from dropping reads whose values nothing else uses.
volatile std::uint64_t g_sink;

double dependent_cycles_per_line(const Lines& lines, std::size_t reads) {
  std::uint64_t at = 0;
  const std::uint64_t start = tsc_begin();
  for (std::size_t i = 0; i < reads; ++i) at = lines[at].next;
  const std::uint64_t stop = tsc_end();
  g_sink = at;
  return static_cast<double>(stop - start) / static_cast<double>(reads);
}

// Independent reads of pseudo-random lines (a multiplicative hash of a counter, scaled onto the lines:
// a few cycles of arithmetic that overlap the fetches), `batch` at a time: all of a batch's lines are
// prefetched, then all are read, as a bulk lookup first prefetches its keys' buckets.
double batched_cycles_per_line(const Lines& lines, std::size_t reads, std::size_t batch, std::uint64_t seed) {
  std::vector<std::uint64_t> at(batch);
  std::uint64_t counter = seed;
  std::uint64_t sum = 0;
  const std::size_t batches = (reads + batch - 1) / batch;
  const std::uint64_t start = tsc_begin();
  for (std::size_t b = 0; b < batches; ++b) {
    for (std::size_t k = 0; k < batch; ++k) {
      const std::uint64_t mixed = (++counter) * 0x9e3779b97f4a7c15ull;
      at[k] = static_cast<std::uint64_t>((static_cast<unsigned __int128>(mixed ^ (mixed >> 29)) * lines.size()) >> 64);
      __builtin_prefetch(&lines[at[k]]);
    }
    for (std::size_t k = 0; k < batch; ++k) sum += lines[at[k]].next;
  }
  const std::uint64_t stop = tsc_end();
  g_sink = sum;
  return static_cast<double>(stop - start) / static_cast<double>(batches * batch);
}

}  // namespace

std::vector<std::uint64_t> random_single_cycle(std::size_t n, Random& random) {
  std::vector<std::uint64_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = i;
  for (std::size_t i = n - 1; n > 1 && i > 0; --i) std::swap(next[i], next[random.below(i)]);
  return next;
}

MemoryLimit probe_memory_limit(const MemoryLimitOptions& options) {
  const std::size_t line_count = options.working_set_bytes / kLineBytes;
  if (line_count < 2) throw std::invalid_argument("memory limit: a working set of at least two cache lines (128 bytes)");
  if (options.reads == 0) throw std::invalid_argument("memory limit: at least one read");
  if (options.batch == 0) throw std::invalid_argument("memory limit: a batch of at least one line");
  if (options.reps < 1) throw std::invalid_argument("memory limit: at least one repetition");

  Lines lines(line_count);
  Random random(0x6d656d6f7279ull);
  const std::vector<std::uint64_t> next = random_single_cycle(line_count, random);
  for (std::size_t i = 0; i < line_count; ++i) lines[i].next = next[i];

  std::vector<double> dependent, batched;
  for (int rep = 0; rep < options.reps; ++rep) {
    dependent.push_back(dependent_cycles_per_line(lines, options.reads));
    batched.push_back(batched_cycles_per_line(lines, options.reads, options.batch, random.next()));
  }
  MemoryLimit limit;
  limit.working_set_bytes = line_count * kLineBytes;
  limit.batch = options.batch;
  limit.tsc_ghz = tsc_hz() / 1e9;
  limit.dependent_cycles_per_line = median(std::move(dependent));
  limit.batched_cycles_per_line = median(std::move(batched));
  return limit;
}

}  // namespace flowtrack
