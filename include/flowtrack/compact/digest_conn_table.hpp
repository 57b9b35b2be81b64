// The Maglev-style baseline of the Concury comparison: a connection table that stores every connection
// with its full key, as a (2,4) bucketized cuckoo table with a 16-bit digest per slot so that a lookup
// compares keys only where the digest matches. Written from the thesis's description ("hash table with
// digest", one table per VIP); single thread, no concurrent readers (it is measured, not deployed).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"

namespace flowtrack::compact {

class DigestConnTable {
 public:
  // Sized for `capacity` connections at load 0.9.
  explicit DigestConnTable(std::uint32_t capacity, std::uint64_t seed = 1);

  bool insert(std::uint64_t key, std::uint16_t dip);  // false: no room (the caller grows)
  std::optional<std::uint16_t> find(std::uint64_t key) const { return find(key, probe(key)); }

  // The bulk path's steps (MaglevDigestLb): the key hashed once into its two buckets and digest, the
  // lines those buckets span brought towards the cache, then the search.
  struct Probe {
    std::uint32_t bucket[2];
    std::uint16_t digest;
  };
  Probe probe(std::uint64_t key) const {
    const std::uint64_t h = seeded_hash(key, seed_);
    const auto n = static_cast<std::uint32_t>(buckets_.size());
    return {{reduce(low_half(h), n), reduce(high_half(h), n)}, static_cast<std::uint16_t>((h ^ (h >> 32)) | 1)};
  }
  void prefetch(const Probe& p) const {
    for (const std::uint32_t b : p.bucket) {
      const Bucket& bucket = buckets_[b];
      __builtin_prefetch(&bucket);                  // the digests and DIPs
      __builtin_prefetch(&bucket.key[kSlots - 1]);  // the keys, when they start the next line
    }
  }
  // The four digests of a bucket compared at once (one 64-bit word, 16-bit lanes); only the slots whose
  // digest matches have their key compared.
  std::optional<std::uint16_t> find(std::uint64_t key, const Probe& p) const {
    constexpr std::uint64_t kLanes = 0x0001000100010001ull, kHigh = 0x8000800080008000ull;
    for (const std::uint32_t b : p.bucket) {
      const Bucket& bucket = buckets_[b];
      std::uint64_t digests;
      std::memcpy(&digests, bucket.digest, sizeof digests);
      const std::uint64_t x = digests ^ (p.digest * kLanes);
      // A lane of x is zero where the digest matches; lanes above a zero one may show too: the key says.
      for (std::uint64_t zero = (x - kLanes) & ~x & kHigh; zero != 0; zero &= zero - 1) {
        const auto s = static_cast<std::size_t>(std::countr_zero(zero)) / 16;
        if (bucket.digest[s] == p.digest && bucket.key[s] == key) return bucket.dip[s];
      }
    }
    return std::nullopt;
  }

  std::size_t bytes() const { return buckets_.size() * sizeof(Bucket) + sizeof(*this); }

 private:
  static constexpr std::size_t kSlots = 4;
  // One cache line and a half: digests and DIPs first (compared first), then the keys.
  struct alignas(16) Bucket {
    std::uint16_t digest[kSlots];  // 0: free slot
    std::uint16_t dip[kSlots];
    std::uint64_t key[kSlots];
  };

  std::uint64_t seed_;
  std::vector<Bucket> buckets_;
};

}  // namespace flowtrack::compact
