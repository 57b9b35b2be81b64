#include "flowtrack/compact/weighted_codes.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace flowtrack::compact {

std::vector<std::uint16_t> weighted_code_table(std::span<const std::uint16_t> backends, std::span<const double> weights,
                                               unsigned code_bits) {
  const std::size_t codes = std::size_t{1} << code_bits;
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (backends.empty() || backends.size() != weights.size() || total <= 0) {
    throw std::invalid_argument("weighted_code_table: needs backends with a positive total weight");
  }
  std::vector<std::size_t> counts(backends.size());
  std::vector<std::pair<double, std::size_t>> remainders;
  std::size_t given = 0;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const double exact = weights[i] / total * static_cast<double>(codes);
    counts[i] = static_cast<std::size_t>(exact);
    given += counts[i];
    if (weights[i] > 0) remainders.push_back({exact - static_cast<double>(counts[i]), i});
  }
  std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t r = 0; given < codes; ++r, ++given) ++counts[remainders[r % remainders.size()].second];
  std::vector<std::uint16_t> table;
  table.reserve(codes);
  for (std::size_t i = 0; i < backends.size(); ++i) table.insert(table.end(), counts[i], backends[i]);
  return table;
}

void pin_codes(std::vector<std::uint16_t>& table, std::span<const std::uint16_t> pinned) {
  for (const std::uint16_t backend : pinned) {
    if (std::find(table.begin(), table.end(), backend) != table.end()) continue;
    std::size_t best_end = 0, best_length = 0;
    for (std::size_t start = 0; start < table.size();) {
      std::size_t end = start + 1;
      while (end < table.size() && table[end] == table[start]) ++end;
      if (end - start > best_length) best_length = end - start, best_end = end;
      start = end;
    }
    if (best_length < 2) throw std::invalid_argument("pin_codes: no range left to take a code from");
    table[best_end - 1] = backend;
  }
}

std::vector<CodeRange> code_ranges(std::span<const std::uint16_t> backends, std::span<const std::uint16_t> table) {
  std::vector<CodeRange> ranges(backends.size());
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const auto first = std::find(table.begin(), table.end(), backends[i]);
    ranges[i].first = static_cast<std::uint32_t>(first - table.begin());
    ranges[i].count = static_cast<std::uint32_t>(std::count(first, table.end(), backends[i]));
  }
  return ranges;
}

}  // namespace flowtrack::compact
