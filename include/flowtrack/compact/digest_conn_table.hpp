// The Maglev-style baseline of the Concury comparison: a connection table that stores every connection
// with its full key, as a (2,4) bucketized cuckoo table with a 16-bit digest per slot so that a lookup
// compares keys only where the digest matches. Written from the thesis's description ("hash table with
// digest", one table per VIP); single thread, no concurrent readers (it is measured, not deployed).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace flowtrack::compact {

class DigestConnTable {
 public:
  // Sized for `capacity` connections at load 0.9.
  explicit DigestConnTable(std::uint32_t capacity, std::uint64_t seed = 1);

  bool insert(std::uint64_t key, std::uint16_t dip);  // false: no room (the caller grows)
  std::optional<std::uint16_t> find(std::uint64_t key) const;
  void prefetch(std::uint64_t key) const;
  std::size_t bytes() const { return buckets_.size() * sizeof(Bucket) + sizeof(*this); }

 private:
  static constexpr std::size_t kSlots = 4;
  // One cache line and a half: digests and DIPs first (compared first), then the keys.
  struct alignas(16) Bucket {
    std::uint16_t digest[kSlots];  // 0: free slot
    std::uint16_t dip[kSlots];
    std::uint64_t key[kSlots];
  };
  struct Probe {
    std::uint32_t bucket[2];
    std::uint16_t digest;
  };
  Probe probe(std::uint64_t key) const;

  std::uint64_t seed_;
  std::vector<Bucket> buckets_;
};

}  // namespace flowtrack::compact
