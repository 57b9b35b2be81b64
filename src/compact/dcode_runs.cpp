#include "flowtrack/compact/dcode_runs.hpp"

#include <algorithm>
#include <bit>
#include <new>

#include "flowtrack/util/assert.hpp"

namespace flowtrack::compact {

namespace {
constexpr std::uint32_t kPaddingStart = 0xffff;  // no Dcode after it: padding words sort last
}  // namespace

void DcodeRuns::LineFree::operator()(std::uint32_t* words) const { ::operator delete(words, std::align_val_t{kLineBytes}); }

DcodeRuns::DcodeRuns(std::span<const std::uint16_t> row)
    : capacity_log2_(static_cast<unsigned>(std::bit_width(std::bit_ceil(runs_in(row))) - 1)),
      dcodes_(static_cast<std::uint32_t>(row.size())) {
  FLOWTRACK_ASSERT(!row.empty() && row.size() <= std::size_t{1} << 16, "Dcodes of at most 16 bits");
  words_.reset(static_cast<std::uint32_t*>(::operator new(bytes(), std::align_val_t{kLineBytes})));
  write(row);
}

std::size_t DcodeRuns::runs_in(std::span<const std::uint16_t> row) {
  std::size_t runs = row.empty() ? 0 : 1;
  for (std::size_t d = 1; d < row.size(); ++d) runs += row[d] != row[d - 1];
  return runs;
}

bool DcodeRuns::holds(std::span<const std::uint16_t> row) const { return row.size() == dcodes_ && runs_in(row) <= capacity(); }

void DcodeRuns::assign(std::span<const std::uint16_t> row) {
  FLOWTRACK_ASSERT(holds(row), "a copy in place keeps the capacity");
  write(row);
}

void DcodeRuns::write(std::span<const std::uint16_t> row) {
  std::size_t at = 0;
  for (std::size_t d = 0; d < row.size(); ++d) {
    if (d == 0 || row[d] != row[d - 1]) store_relaxed(words_[at++], static_cast<std::uint32_t>(d << 16 | row[d]));
  }
  for (; at < capacity(); ++at) store_relaxed(words_[at], kPaddingStart << 16 | row.back());
}

std::vector<std::uint16_t> DcodeRuns::row() const {
  std::vector<std::uint16_t> row(dcodes_);
  const auto start = [&](std::size_t i) { return i < capacity() ? std::min<std::size_t>(words_[i] >> 16, dcodes_) : dcodes_; };
  for (std::size_t i = 0; i < capacity(); ++i) {
    std::fill(row.begin() + static_cast<std::ptrdiff_t>(start(i)), row.begin() + static_cast<std::ptrdiff_t>(start(i + 1)),
              static_cast<std::uint16_t>(words_[i]));
  }
  return row;
}

}  // namespace flowtrack::compact
