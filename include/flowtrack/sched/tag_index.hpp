// A map from a flow tag (a 64-bit flow identity) to a 32-bit value: the index behind the migration
// table.
//
// Open addressing with linear probing over a power-of-two array kept at most half full, so a probe
// sequence is short. Erase shifts the following entries of the cluster back instead of leaving
// tombstones, so churn never degrades lookups. The tag ~0 marks an empty slot and cannot be stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace flowtrack {

class TagIndex {
 public:
  static constexpr std::uint64_t kEmptyTag = ~std::uint64_t{0};

  // Sized so that `expected` entries need no growth.
  explicit TagIndex(std::size_t expected);

  const std::uint32_t* find(std::uint64_t tag) const {
    for (std::size_t i = home(tag);; i = (i + 1) & mask_) {
      if (slots_[i].tag == tag) return &slots_[i].value;
      if (slots_[i].tag == kEmptyTag) return nullptr;
    }
  }
  std::uint32_t* find(std::uint64_t tag) {
    return const_cast<std::uint32_t*>(static_cast<const TagIndex&>(*this).find(tag));
  }

  // Starts loading the first slot a lookup of `tag` reads.
  void prefetch(std::uint64_t tag) const { __builtin_prefetch(&slots_[home(tag)]); }

  // Doubles the array when it would pass half full: amortised, and never once the index has reached
  // its working size.
  void assign(std::uint64_t tag, std::uint32_t value);
  // assign() for a tag known to be absent: no lookup first.
  void insert_absent(std::uint64_t tag, std::uint32_t value);
  bool erase(std::uint64_t tag);

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t tag = kEmptyTag;
    std::uint32_t value = 0;
  };

  // Fibonacci hashing: the top bits of tag * 2^64/phi, so dense tags (0, 1, 2, ...) spread out.
  std::size_t home(std::uint64_t tag) const { return static_cast<std::size_t>((tag * 0x9e3779b97f4a7c15ull) >> shift_); }
  void rebuild(std::size_t capacity);

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 0;
  std::size_t size_ = 0;
};

}  // namespace flowtrack
