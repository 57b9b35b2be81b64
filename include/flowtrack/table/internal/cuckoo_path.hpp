// The cuckoo displacement step shared by the bucketized cuckoo tables (cuckoo.hpp, cuckoo_pp.hpp).
//
// When both candidate buckets of a new key are full, make_room() searches breadth first, from both
// buckets at once, for the shortest chain of moves that ends at a free slot: each node is a bucket, and
// its children are the alternate buckets of the entries it holds. It then performs the moves from the
// free end back to the start, so every moved entry is copied into its new slot before its old slot is
// cleared: at every instant each key sits in one of its two buckets (what lock-free readers rely on).
// The search visits at most kMaxCuckooSearch buckets; when it finds no free slot, nothing has moved.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace flowtrack {

inline constexpr std::size_t kMaxCuckooSearch = 512;

struct CuckooSlot {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t bucket = 0;
  std::uint32_t slot = kNone;
  bool valid() const { return slot != kNone; }
};

// free_slot(bucket) -> CuckooSlot (invalid when the bucket is full); alternate_of(bucket, slot) -> the
// other bucket of the entry in that slot; move(from, to) moves one entry into a free slot. Returns the
// slot freed in `first` or `second`, or an invalid slot.
template <std::size_t Slots, class FreeSlot, class AlternateOf, class Move>
CuckooSlot make_room(std::uint32_t first, std::uint32_t second, FreeSlot&& free_slot, AlternateOf&& alternate_of,
                     Move&& move) {
  struct Node {
    std::uint32_t bucket;
    std::int32_t parent;  // index into `nodes`, -1 for a start bucket
    std::uint32_t slot;   // the slot of the parent bucket whose entry moves here
  };
  std::array<Node, kMaxCuckooSearch> nodes;
  std::size_t count = 0;
  nodes[count++] = {first, -1, 0};
  if (second != first) nodes[count++] = {second, -1, 0};
  for (std::size_t head = 0; head < count; ++head) {
    const std::uint32_t bucket = nodes[head].bucket;
    if (const CuckooSlot free = free_slot(bucket); free.valid()) {
      // Walk back to the start bucket; each step moves the parent's entry into the slot just freed.
      CuckooSlot hole = free;
      for (auto at = static_cast<std::int32_t>(head); nodes[at].parent >= 0; at = nodes[at].parent) {
        const CuckooSlot source{nodes[nodes[at].parent].bucket, nodes[at].slot};
        move(source, hole);
        hole = source;
      }
      return hole;
    }
    for (std::uint32_t s = 0; s < Slots && count < kMaxCuckooSearch; ++s) {
      const std::uint32_t next = alternate_of(bucket, s);
      if (next != bucket) nodes[count++] = {next, static_cast<std::int32_t>(head), s};
    }
  }
  return {};
}

}  // namespace flowtrack
