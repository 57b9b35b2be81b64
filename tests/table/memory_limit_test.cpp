// The memory-limit probe that the benchmarks print beside their figures (lab/memory_limit.hpp): its
// chase order is one cycle through every line, and it refuses what it cannot measure. Its figures are
// timings, which the benchmarks report and no test judges.
#include "flowtrack/lab/memory_limit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace flowtrack {
namespace {

TEST(MemoryLimitChase, FollowingNextVisitsEveryLineOnceBeforeComingBack) {
  for (std::size_t n : {2u, 3u, 64u, 1000u, 4097u}) {
    Random random(n);
    const std::vector<std::uint64_t> next = random_single_cycle(n, random);
    std::vector<bool> seen(n, false);
    std::uint64_t at = 0;
    for (std::size_t step = 0; step < n; ++step) {
      ASSERT_LT(at, n);
      ASSERT_FALSE(seen[at]) << "line " << at << " visited twice in a cycle of " << n;
      seen[at] = true;
      at = next[at];
    }
    EXPECT_EQ(at, 0u) << "the chase of " << n << " lines does not come back to its start";
  }
}

TEST(MemoryLimitChase, DifferentSeedsGiveDifferentOrders) {
  Random a(1), b(2);
  EXPECT_NE(random_single_cycle(1000, a), random_single_cycle(1000, b));
}

TEST(MemoryLimitProbe, ReportsTheWholeLinesItProbedAndPositiveFigures) {
  MemoryLimitOptions options;
  options.working_set_bytes = 64 * 100 + 10;  // the 10 bytes make no line
  options.reads = 4096;
  options.batch = 8;
  options.reps = 1;
  const MemoryLimit limit = probe_memory_limit(options);
  EXPECT_EQ(limit.working_set_bytes, 6400u);
  EXPECT_EQ(limit.batch, 8u);
  EXPECT_GT(limit.tsc_ghz, 0.0);
  EXPECT_TRUE(std::isfinite(limit.dependent_cycles_per_line) && limit.dependent_cycles_per_line > 0);
  EXPECT_TRUE(std::isfinite(limit.batched_cycles_per_line) && limit.batched_cycles_per_line > 0);
  EXPECT_GT(limit.dependent_ns_per_line(), 0.0);
}

TEST(MemoryLimitProbe, RefusesWhatItCannotMeasure) {
  const auto refused = [](MemoryLimitOptions options) { EXPECT_THROW(probe_memory_limit(options), std::invalid_argument); };
  MemoryLimitOptions options;
  options.working_set_bytes = 127;
  refused(options);
  options = {};
  options.reads = 0;
  refused(options);
  options = {};
  options.batch = 0;
  refused(options);
  options = {};
  options.reps = 0;
  refused(options);
}

}  // namespace
}  // namespace flowtrack
