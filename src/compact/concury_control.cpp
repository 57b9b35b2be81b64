#include "flowtrack/compact/concury_control.hpp"

#include <algorithm>

#include "flowtrack/compact/weighted_codes.hpp"

namespace flowtrack::compact {

ConcuryControl::ConcuryControl(unsigned dcode_bits, std::uint64_t seed) : dcode_bits_(dcode_bits), seed_(seed) {}

std::uint32_t ConcuryControl::add_vip(std::vector<std::uint16_t> dips, std::vector<double> weights,
                                      std::uint32_t expected_connections) {
  const auto index = static_cast<std::uint32_t>(vips_.size());
  std::vector<std::uint16_t> row = weighted_code_table(dips, weights, dcode_bits_);
  vips_.push_back({OthelloMap<std::uint64_t>(expected_connections, seed_ + index), std::move(dips), std::move(weights),
                   std::move(row), seed_ * 0x9e3779b97f4a7c15ull + index});
  return index;
}

ConcuryVipImage ConcuryControl::image(std::uint32_t index) const {
  const Vip& vip = vips_[index];
  return {vip.connections.index().refill(
              dcode_bits_, [&](std::uint32_t slot) { return std::uint64_t{vip.connections.state_at(slot)}; }, vip.fill_seed),
          vip.row};
}

void ConcuryControl::learn(std::uint32_t vip, std::uint64_t key, std::uint32_t dcode) {
  vips_[vip].connections.insert_or_assign(key, dcode);
}

void ConcuryControl::forget(std::uint32_t vip, std::uint64_t key) { vips_[vip].connections.erase(key); }

std::optional<std::uint16_t> ConcuryControl::dip_of(std::uint32_t vip, std::uint64_t key) const {
  const auto dcode = vips_[vip].connections.find(key);
  if (!dcode) return std::nullopt;
  return vips_[vip].row[*dcode];
}

std::size_t ConcuryControl::set_pool(std::uint32_t index, std::vector<std::uint16_t> dips, std::vector<double> weights) {
  Vip& vip = vips_[index];
  std::vector<std::uint16_t> row = weighted_code_table(dips, weights, dcode_bits_);
  const std::vector<CodeRange> ranges = code_ranges(dips, row);
  std::size_t lost = 0;
  for (std::uint32_t p = 0; p < vip.connections.size(); ++p) {
    const std::uint32_t dcode = vip.connections.state_at(p);
    const std::uint16_t dip = vip.row[dcode];
    if (row[dcode] == dip) continue;
    const auto at = std::find(dips.begin(), dips.end(), dip);
    const CodeRange range = at == dips.end() ? CodeRange{} : ranges[static_cast<std::size_t>(at - dips.begin())];
    if (range.count == 0) {
      ++lost;
      continue;
    }
    // A Dcode in the old DIP's new range, spread by the key so the range's codes share the load.
    const std::uint64_t key = vip.connections.key_at(p);
    vip.connections.insert_or_assign(key, range.first + static_cast<std::uint32_t>(seeded_hash(key, vip.fill_seed) % range.count));
  }
  vip.dips = std::move(dips);
  vip.weights = std::move(weights);
  vip.row = std::move(row);
  return lost;
}

}  // namespace flowtrack::compact
