// The SilkRoad-style baseline of the Concury comparison: a multi-level connection table that stores, per
// connection, only a 16-bit digest and the version of the DIP pool it was assigned under (no key), as
// a switch pipeline would in successive stages. Level i is an array of 4-slot buckets; a connection goes
// to the first level whose bucket has room, and a lookup walks the levels in order until a digest
// matches: an alien or a digest twin in an earlier level can be a false hit. Level sizes shrink
// geometrically (the first holds most connections). Written from the thesis's description; single thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace flowtrack::compact {

class SilkRoadTable {
 public:
  // Sized for `capacity` connections at load 0.9 over all levels.
  explicit SilkRoadTable(std::uint32_t capacity, unsigned levels = 4, std::uint64_t seed = 1);

  bool insert(std::uint64_t key, std::uint8_t version);  // false: every level's bucket is full
  std::optional<std::uint8_t> find(std::uint64_t key) const;
  void prefetch(std::uint64_t key) const;  // the first level's bucket (where most connections are)
  std::size_t bytes() const;

 private:
  static constexpr std::size_t kSlots = 4;
  // Entry: digest (16 bits, never 0) | version << 16; 0 is a free slot.
  struct Bucket {
    std::uint32_t entry[kSlots];
  };
  std::uint32_t bucket_at(unsigned level, std::uint64_t hash) const;

  std::uint64_t seed_;
  std::vector<std::vector<Bucket>> levels_;
};

}  // namespace flowtrack::compact
