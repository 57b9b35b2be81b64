// A VIP's Dcode -> DIP row kept as its runs (maximal stretches of Dcodes with one DIP), the form in which
// Concury's data plane holds it: weighted_code_table gives a row one run per backend (plus one per
// pin), so 32 backends are 32 runs, 128 bytes, where the row is 2^12 entries of 2 bytes. Any row can
// be kept so; a row of more runs has a longer table (at most one run per Dcode).
//
// Layout: the runs in one array, sorted by first Dcode, each as one 32-bit word (first Dcode << 16) |
// DIP, so that "run i starts at or before Dcode d" is one compare of the word with (d << 16) | 0xffff
// and the answer is the low half of the word the search stops on. The array holds a power of two of
// words (its capacity, fixed at construction); the words after the last run are padding
// (0xffff << 16) | the last run's DIP: a search for Dcode 0xffff (16-bit Dcodes) may stop on one, and
// gets the right DIP from it. The array is aligned to a cache line, so a table of up to 16 runs is one
// line.
//
// Lookup: a branch-free binary search, log2(capacity) compares and conditional adds, each one load of
// the array (L1-resident: 128 VIPs of 32 runs are 16 KiB), then the answer's load.
//
// Concurrency: assign() copies a row of no more runs than the capacity in place with relaxed atomic
// stores, so readers may be inside (they must validate what they read: a search racing with assign()
// may stop on any word, but never outside the array). Everything else needs no reader inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

class DcodeRuns {
 public:
  // The runs of `row` (at most 2^16 entries, at least one) in a table of the smallest power of two of
  // words that holds them.
  explicit DcodeRuns(std::span<const std::uint16_t> row);

  static std::size_t runs_in(std::span<const std::uint16_t> row);
  // Whether assign(row) may copy `row` in place: as many Dcodes, no more runs than the capacity.
  bool holds(std::span<const std::uint16_t> row) const;
  void assign(std::span<const std::uint16_t> row);
  // The row back, entry for entry.
  std::vector<std::uint16_t> row() const;

  // What a lookup needs, in one word: the array's address (line-aligned, so its low 6 bits are 0) ORed
  // with log2(capacity) (at most 16), so that a bulk lookup's first pass hands it on like an address.
  using Handle = std::uintptr_t;
  Handle handle() const { return reinterpret_cast<Handle>(words_.get()) | capacity_log2_; }
  static std::uint16_t dip_of(Handle runs, std::uint32_t dcode) {
    const auto* words = reinterpret_cast<const std::uint32_t*>(runs & ~kLogMask);
    const std::uint32_t key = dcode << 16 | 0xffff;  // at or after every run starting at or before dcode
    // words[0] starts at Dcode 0, at or before every key: `at` ends on the last run starting at or
    // before dcode, the one holding it. Each step a conditional move, no branch on the data.
    const std::uint32_t* at = words;
    for (std::size_t half = std::size_t{1} << (runs & kLogMask) >> 1; half != 0; half >>= 1) {
      at = load_relaxed(at[half]) <= key ? at + half : at;
    }
    return static_cast<std::uint16_t>(load_relaxed(*at));
  }

  std::size_t capacity() const { return std::size_t{1} << capacity_log2_; }
  std::size_t bytes() const { return capacity() * sizeof(std::uint32_t); }

 private:
  static constexpr std::size_t kLineBytes = 64;
  static constexpr Handle kLogMask = kLineBytes - 1;
  struct LineFree {
    void operator()(std::uint32_t* words) const;
  };
  // Writes row's runs, then the padding, into the array (relaxed atomic stores).
  void write(std::span<const std::uint16_t> row);

  std::unique_ptr<std::uint32_t[], LineFree> words_;
  unsigned capacity_log2_;
  std::uint32_t dcodes_;  // the row's length
};

}  // namespace flowtrack::compact
