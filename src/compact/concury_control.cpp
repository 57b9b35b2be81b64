#include "flowtrack/compact/concury_control.hpp"

#include <algorithm>
#include <span>

#include "flowtrack/compact/dcode_blocks_builder.hpp"
#include "flowtrack/compact/weighted_codes.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack::compact {

ConcuryControl::ConcuryControl(unsigned dcode_bits, std::uint64_t seed, ConcuryLayout layout)
    : dcode_bits_(dcode_bits), seed_(seed), layout_(layout) {}

std::uint32_t ConcuryControl::add_vip(std::vector<std::uint16_t> dips, std::vector<double> weights,
                                      std::uint32_t expected_connections) {
  const auto index = static_cast<std::uint32_t>(vips_.size());
  std::vector<std::uint16_t> row = make_row(dips, weights, {});
  vips_.push_back({OthelloMap<std::uint64_t>(expected_connections, seed_ + index), expected_connections, std::move(dips),
                   std::move(weights), std::move(row), seed_ * 0x9e3779b97f4a7c15ull + index});
  return index;
}

std::vector<std::uint16_t> ConcuryControl::make_row(std::span<const std::uint16_t> dips, std::span<const double> weights,
                                                    std::span<const std::uint16_t> pinned) const {
  if (std::any_of(weights.begin(), weights.end(), [](double w) { return w > 0; })) {
    std::vector<std::uint16_t> row = weighted_code_table(dips, weights, dcode_bits_);
    pin_codes(row, pinned);
    return row;
  }
  // No DIP takes new connections: the pinned ones share the codes, or no code has a DIP.
  if (pinned.empty()) return std::vector<std::uint16_t>(std::size_t{1} << dcode_bits_, kNoDip);
  return weighted_code_table(pinned, std::vector<double>(pinned.size(), 1.0), dcode_bits_);
}

ConcuryVipImage ConcuryControl::image(std::uint32_t index, const ConcuryVipImage* in_use) {
  if (layout_ == ConcuryLayout::blocks) return blocks_image(index, in_use);
  Vip& vip = vips_[index];
  return {vip.connections.refill_states(dcode_bits_, vip.fill_seed, in_use != nullptr ? &std::get<OthelloImage>(in_use->codes) : nullptr),
          vip.row};
}

ConcuryVipImage ConcuryControl::image_after_keep(std::uint32_t index, std::uint64_t key, const ConcuryVipImage& in_use) {
  if (layout_ == ConcuryLayout::pairs && in_use.dips == vips_[index].row) {
    ConcuryVipImage changed = in_use;
    if (vips_[index].connections.restate(std::get<OthelloImage>(changed.codes), key)) return changed;
  }
  return image(index, &in_use);
}

ConcuryVipImage ConcuryControl::blocks_image(std::uint32_t index, const ConcuryVipImage* in_use) const {
  const Vip& vip = vips_[index];
  std::vector<DcodePair> pairs;
  pairs.reserve(vip.connections.size());
  vip.connections.for_each([&](std::uint64_t key, std::uint32_t dcode) { pairs.push_back({key, dcode}); });
  const std::size_t sized_for = std::max<std::size_t>(pairs.size(), vip.expected_connections);
  if (in_use != nullptr) {
    const DcodeBlocksImage& used = std::get<DcodeBlocksImage>(in_use->codes);
    // Blocks in use that hold the connections at most kBlocksRegrowLoad times their load keep their
    // geometry (and the blocks that already answer their keys, their contents).
    if (static_cast<double>(dcode_blocks_for(pairs.size(), dcode_bits_)) <= kBlocksRegrowLoad * used.nblocks()) {
      return {rebuild_dcode_blocks(used, pairs), vip.row};
    }
  }
  return {build_dcode_blocks(pairs, dcode_blocks_for(sized_for, dcode_bits_), dcode_bits_, vip.fill_seed, vip.fill_seed + 1),
          vip.row};
}

bool ConcuryControl::learn(std::uint32_t vip, std::uint64_t key, std::uint32_t dcode) {
  return vips_[vip].connections.insert_or_assign(key, dcode);
}

namespace {

// A software pipeline over a batch of connections (each with .vip and .key): connection i + kCellsAhead
// has its index cells on the way, connection i + kKeyAhead (whose cells have had time to arrive) the
// key they point at, and do(connection i) runs.
template <class Connection, class Do>
void pipelined(const ConcuryControl& control, std::span<const Connection> batch, Do&& do_one) {
  constexpr std::size_t kCellsAhead = 8, kKeyAhead = 4;
  for (std::size_t i = 0; i < std::min(kCellsAhead, batch.size()); ++i) control.prefetch_cells(batch[i].vip, batch[i].key);
  for (std::size_t i = 0; i < std::min(kKeyAhead, batch.size()); ++i) control.prefetch_key(batch[i].vip, batch[i].key);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (i + kCellsAhead < batch.size()) control.prefetch_cells(batch[i + kCellsAhead].vip, batch[i + kCellsAhead].key);
    if (i + kKeyAhead < batch.size()) control.prefetch_key(batch[i + kKeyAhead].vip, batch[i + kKeyAhead].key);
    do_one(batch[i]);
  }
}

}  // namespace

std::size_t ConcuryControl::learn_all(std::span<const Report> reports, std::span<bool> fresh) {
  FLOWTRACK_ASSERT(fresh.empty() || fresh.size() == reports.size(), "one answer a report");
  std::size_t count = 0, i = 0;
  pipelined(*this, reports, [&](const Report& r) {
    const bool is_new = learn(r.vip, r.key, r.dcode);
    count += is_new ? 1 : 0;
    if (!fresh.empty()) fresh[i] = is_new;
    ++i;
  });
  return count;
}

void ConcuryControl::forget_all(std::span<const Departure> departures) {
  pipelined(*this, departures, [&](const Departure& d) { forget(d.vip, d.key); });
}

void ConcuryControl::forget(std::uint32_t vip, std::uint64_t key) { vips_[vip].connections.erase(key); }

std::optional<std::uint16_t> ConcuryControl::dip_of(std::uint32_t vip, std::uint64_t key) const {
  const auto dcode = vips_[vip].connections.find(key);
  if (!dcode) return std::nullopt;
  return vips_[vip].row[*dcode];
}

namespace {

// A Dcode of `range` for `key`, spread by the key so that the range's codes share the load.
std::uint32_t code_in(CodeRange range, std::uint64_t key, std::uint64_t seed) {
  return range.first + static_cast<std::uint32_t>(seeded_hash(key, seed) % range.count);
}

}  // namespace

std::size_t ConcuryControl::set_pool(std::uint32_t index, std::vector<std::uint16_t> dips, std::vector<double> weights) {
  return reshape(vips_[index], std::move(dips), std::move(weights), std::nullopt);
}

std::size_t ConcuryControl::reshape(Vip& vip, std::vector<std::uint16_t> dips, std::vector<double> weights,
                                    std::optional<std::uint16_t> also_pin) {
  // The DIPs of weight 0 that hold known connections (or are to hold one: also_pin) keep a code.
  std::vector<bool> holds(dips.size(), false);
  const auto position = [&](std::uint16_t dip) { return static_cast<std::size_t>(std::find(dips.begin(), dips.end(), dip) - dips.begin()); };
  vip.connections.for_each([&](std::uint64_t, std::uint32_t dcode) {
    const std::size_t at = position(vip.row[dcode]);
    if (at < dips.size()) holds[at] = true;
  });
  if (also_pin && position(*also_pin) < dips.size()) holds[position(*also_pin)] = true;
  std::vector<std::uint16_t> pinned;
  for (std::size_t d = 0; d < dips.size(); ++d) {
    if (holds[d] && weights[d] <= 0) pinned.push_back(dips[d]);
  }
  std::vector<std::uint16_t> row = make_row(dips, weights, pinned);
  const std::vector<CodeRange> ranges = code_ranges(dips, row);
  std::size_t lost = 0;
  vip.connections.for_each([&](std::uint64_t key, std::uint32_t& dcode) {
    const std::uint16_t dip = vip.row[dcode];
    FLOWTRACK_ASSERT(dip != kNoDip, "a known connection has a DIP");
    if (row[dcode] == dip) return;
    const std::size_t at = position(dip);
    if (at == dips.size() || ranges[at].count == 0) {
      ++lost;
      return;
    }
    dcode = code_in(ranges[at], key, vip.fill_seed);
  });
  vip.dips = std::move(dips);
  vip.weights = std::move(weights);
  vip.row = std::move(row);
  return lost;
}

bool ConcuryControl::lists(std::uint32_t vip, std::uint16_t dip) const {
  const std::vector<std::uint16_t>& dips = vips_[vip].dips;
  return std::find(dips.begin(), dips.end(), dip) != dips.end();
}

bool ConcuryControl::keep(std::uint32_t index, std::uint64_t key, std::uint16_t dip) {
  Vip& vip = vips_[index];
  FLOWTRACK_ASSERT(lists(index, dip), "keep() names a DIP of the VIP");
  const bool pinning = std::find(vip.row.begin(), vip.row.end(), dip) == vip.row.end();
  if (pinning) reshape(vip, vip.dips, vip.weights, dip);
  const std::uint16_t one[] = {dip};
  vip.connections.insert_or_assign(key, code_in(code_ranges(one, vip.row)[0], key, vip.fill_seed));
  return pinning;
}

}  // namespace flowtrack::compact
