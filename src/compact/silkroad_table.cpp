#include "flowtrack/compact/silkroad_table.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "flowtrack/compact/compact_key.hpp"

namespace flowtrack::compact {
namespace {

std::uint32_t digest_of(std::uint64_t hash) { return static_cast<std::uint32_t>(hash >> 48) | 1u; }

}  // namespace

SilkRoadTable::SilkRoadTable(std::uint32_t capacity, unsigned levels, std::uint64_t seed) : seed_(seed) {
  // Shares 1/2, 1/4, ... of the slots, the last level taking the remainder.
  const double total_buckets = std::ceil(capacity / (kSlots * 0.9));
  double share = 0.5;
  for (unsigned l = 0; l < levels; ++l, share /= 2) {
    const double part = l + 1 == levels ? share * 2 : share;
    levels_.emplace_back(std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(total_buckets * part))), Bucket{});
  }
}

std::uint32_t SilkRoadTable::bucket_at(unsigned level, std::uint64_t hash) const {
  // Each level reads another rotation of the hash: independent enough buckets from one hash call.
  return reduce(static_cast<std::uint32_t>(std::rotl(hash, static_cast<int>(13 * level))),
                static_cast<std::uint32_t>(levels_[level].size()));
}

void SilkRoadTable::prefetch(std::uint64_t key) const {
  __builtin_prefetch(&levels_[0][bucket_at(0, seeded_hash(key, seed_))]);
}

std::optional<std::uint8_t> SilkRoadTable::find(std::uint64_t key) const {
  const std::uint64_t h = seeded_hash(key, seed_);
  const std::uint32_t digest = digest_of(h);
  for (unsigned l = 0; l < levels_.size(); ++l) {
    const Bucket& bucket = levels_[l][bucket_at(l, h)];
    for (const std::uint32_t e : bucket.entry) {
      if ((e & 0xffff) == digest) return static_cast<std::uint8_t>(e >> 16);
    }
  }
  return std::nullopt;
}

bool SilkRoadTable::insert(std::uint64_t key, std::uint8_t version) {
  const std::uint64_t h = seeded_hash(key, seed_);
  for (unsigned l = 0; l < levels_.size(); ++l) {
    Bucket& bucket = levels_[l][bucket_at(l, h)];
    for (std::uint32_t& e : bucket.entry) {
      if (e == 0) {
        e = digest_of(h) | (std::uint32_t{version} << 16);
        return true;
      }
    }
  }
  return false;
}

std::size_t SilkRoadTable::bytes() const {
  std::size_t total = sizeof(*this);
  for (const auto& level : levels_) total += level.size() * sizeof(Bucket);
  return total;
}

}  // namespace flowtrack::compact
