#include "flowtrack/compact/maglev_digest_lb.hpp"

#include <algorithm>

#include "flowtrack/compact/internal/prefetch_policy.hpp"
#include "flowtrack/compact/weighted_codes.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack::compact {

std::uint32_t MaglevDigestLb::add_vip(std::vector<std::uint16_t> row, std::uint32_t capacity, std::uint64_t seed) {
  FLOWTRACK_ASSERT(!row.empty() && (row.size() & (row.size() - 1)) == 0, "the row has 2^k entries");
  vips_.push_back({DigestConnTable(capacity, seed), std::move(row)});
  table_bytes_ += vips_.back().table.bytes();
  prefetch_ = prefetch_pays(table_bytes_);
  return static_cast<std::uint32_t>(vips_.size() - 1);
}

std::uint16_t MaglevDigestLb::new_connection_dip(std::uint32_t vip, std::uint64_t key) const {
  return hashed_pick(vips_[vip].row, key);
}

std::uint16_t MaglevDigestLb::lookup(std::uint32_t vip, std::uint64_t key) const {
  const auto found = vips_[vip].table.find(key);
  return found ? *found : new_connection_dip(vip, key);
}

void MaglevDigestLb::lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips) const {
  constexpr std::size_t kChunk = 32;
  DigestConnTable::Probe probes[kChunk];
  for (std::size_t base = 0; base < queries.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, queries.size() - base);
    const LbQuery* q = queries.data() + base;
    for (std::size_t i = 0; i < n; ++i) {
      const DigestConnTable& table = vips_[q[i].vip].table;
      probes[i] = table.probe(q[i].key);
      if (prefetch_) table.prefetch(probes[i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto found = vips_[q[i].vip].table.find(q[i].key, probes[i]);
      dips[base + i] = found ? *found : new_connection_dip(q[i].vip, q[i].key);
    }
  }
}

std::size_t MaglevDigestLb::bytes() const {
  std::size_t total = sizeof(*this);
  for (const Vip& v : vips_) total += v.table.bytes() + v.row.size() * sizeof(std::uint16_t);
  return total;
}

}  // namespace flowtrack::compact
