#include "flowtrack/compact/digest_conn_table.hpp"

#include <algorithm>
#include <cmath>

#include "flowtrack/table/internal/cuckoo_path.hpp"

namespace flowtrack::compact {

DigestConnTable::DigestConnTable(std::uint32_t capacity, std::uint64_t seed)
    : seed_(seed), buckets_(std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(capacity / (kSlots * 0.9))))) {}

bool DigestConnTable::insert(std::uint64_t key, std::uint16_t dip) {
  const Probe p = probe(key);
  auto free_slot = [&](std::uint32_t b) {
    for (std::uint32_t s = 0; s < kSlots; ++s) {
      if (buckets_[b].digest[s] == 0) return CuckooSlot{b, s};
    }
    return CuckooSlot{};
  };
  auto alternate_of = [&](std::uint32_t b, std::uint32_t s) {
    const Probe other = probe(buckets_[b].key[s]);
    return other.bucket[0] == b ? other.bucket[1] : other.bucket[0];
  };
  auto move = [&](CuckooSlot from, CuckooSlot to) {
    Bucket& src = buckets_[from.bucket];
    Bucket& dst = buckets_[to.bucket];
    dst.digest[to.slot] = src.digest[from.slot];
    dst.dip[to.slot] = src.dip[from.slot];
    dst.key[to.slot] = src.key[from.slot];
    src.digest[from.slot] = 0;
  };
  CuckooSlot hole = free_slot(p.bucket[0]);
  if (!hole.valid()) hole = free_slot(p.bucket[1]);
  if (!hole.valid()) hole = make_room<kSlots>(p.bucket[0], p.bucket[1], free_slot, alternate_of, move);
  if (!hole.valid()) return false;
  Bucket& bucket = buckets_[hole.bucket];
  bucket.digest[hole.slot] = p.digest;
  bucket.dip[hole.slot] = dip;
  bucket.key[hole.slot] = key;
  return true;
}

}  // namespace flowtrack::compact
