#include "flowtrack/compact/concury_lookup.hpp"

#include <algorithm>

namespace flowtrack::compact {

std::uint32_t ConcuryLookup::add_vip(const ConcuryVipImage& image) {
  vips_.push_back({std::make_unique<OthelloLookup>(image.codes, 1), image.dips, std::make_unique<VersionStripes>(1)});
  return static_cast<std::uint32_t>(vips_.size() - 1);
}

void ConcuryLookup::apply(std::uint32_t index, const ConcuryVipImage& image) {
  Vip& vip = vips_[index];
  if (!vip.codes->shape().same_geometry(image.codes.shape) || vip.dips.size() != image.dips.size()) {
    // Another geometry: the caller guarantees no reader is inside (see the header).
    vip.codes = std::make_unique<OthelloLookup>(image.codes, 1);
    vip.dips = image.dips;
    return;
  }
  VersionStripes::ExclusiveSection exclusive(*vip.guard);
  OthelloMessage message;
  message.image = std::make_shared<const OthelloImage>(image.codes);
  vip.codes->apply(message);
  for (std::size_t d = 0; d < vip.dips.size(); ++d) store_relaxed(vip.dips[d], image.dips[d]);
}

// The VIP's guard covers its Othello too (every write to it happens inside the guard's exclusive
// section), so the Othello is read unguarded and validated once here.
ConcuryLookup::Answer ConcuryLookup::read(const Vip& vip, std::uint64_t key) const {
  for (;;) {
    const auto snap = vip.guard->stripes_begin(vip.guard->epoch_begin(), 0, 0);
    const auto dcode = static_cast<std::uint32_t>(vip.codes->value_at(vip.codes->probe(key)));
    const std::uint16_t dip = load_relaxed(vip.dips[dcode]);
    if (vip.guard->read_valid(snap, 0, 0)) return {dcode, dip};
  }
}

// Three passes over each chunk, so that the misses of a pass overlap: hash and prefetch the two cells,
// read the cells and prefetch the row entry their Dcode names, read the row.
void ConcuryLookup::lookup_bulk(std::span<const ConcuryQuery> queries, std::span<std::uint16_t> dips) const {
  constexpr std::size_t kChunk = 32;
  VersionStripes::Snapshot snaps[kChunk];
  OthelloProbe probes[kChunk];
  std::uint32_t dcodes[kChunk];
  for (std::size_t base = 0; base < queries.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, queries.size() - base);
    for (std::size_t i = 0; i < n; ++i) {
      const Vip& vip = vips_[queries[base + i].vip];
      snaps[i] = vip.guard->stripes_begin(vip.guard->epoch_begin(), 0, 0);
      probes[i] = vip.codes->probe(queries[base + i].key);
      vip.codes->prefetch(probes[i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Vip& vip = vips_[queries[base + i].vip];
      dcodes[i] = static_cast<std::uint32_t>(vip.codes->value_at(probes[i]));
      __builtin_prefetch(&vip.dips[dcodes[i]]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Vip& vip = vips_[queries[base + i].vip];
      const std::uint16_t dip = load_relaxed(vip.dips[dcodes[i]]);
      // A rewrite of this VIP raced with the burst: read this one again alone.
      dips[base + i] = vip.guard->read_valid(snaps[i], 0, 0) ? dip : read(vip, queries[base + i].key).dip;
    }
  }
}

ConcuryVipImage ConcuryLookup::image(std::uint32_t vip) const { return {vips_[vip].codes->image(), vips_[vip].dips}; }

std::size_t ConcuryLookup::bytes() const {
  std::size_t total = sizeof(*this) + vips_.size() * sizeof(Vip);
  for (const Vip& v : vips_) total += v.codes->bytes() + v.dips.size() * sizeof(std::uint16_t) + v.guard->bytes();
  return total;
}

}  // namespace flowtrack::compact
