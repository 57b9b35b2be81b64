// Maglev consistent hashing (Eisenbud et al., NSDI 2016, section 3.4): a lookup table of prime size M
// in which every backend owns about weight/total of the entries, filled so that removing one of N
// backends reassigns little more than the 1/N of the entries it owned.
//
// Each backend has a permutation of the M entries, (offset + j * skip) mod M for j = 0, 1, ..., with
// offset and skip derived from two independent hashes of its name (skip in [1, M-1], so with M prime
// the permutation visits every entry). Population runs in rounds; in each round every backend, in the
// order of their names, claims the next entries of its permutation that are still free, as many as
// bring its count to floor(round * weight / max_weight), until the table is full. Deterministic and
// independent of the order the backends are listed in: the same backends (names, weights) give every
// entry to the same name, whichever index each has in the list (so load balancers whose pools were
// configured, added to and reordered differently agree, as long as they name each backend alike).
//
// Weight tolerance: with N backends of total weight W, backend i owns M * w_i / W entries within
// N + 1 entries (counts are whole rounds' worth up to rounding, and only the last round, cut short
// when the table fills, is uneven), whatever the weights, including weights larger than M. A
// backend's share of the flows then follows its weight as far as the flow hash is uniform.
// A table with no backends, or none of weight > 0, answers kNoBackend.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace flowtrack {

class MaglevTable {
 public:
  static constexpr std::uint32_t kDefaultSize = 65537;  // prime, > 100 x a few hundred backends
  static constexpr std::uint32_t kNoBackend = ~std::uint32_t{0};

  struct Backend {
    std::string name;
    std::uint32_t weight = 1;  // 0: owns no entry (drained)
  };

  // Throws std::invalid_argument unless `size` is a prime >= 3.
  explicit MaglevTable(std::uint32_t size = kDefaultSize);

  // Fills the table from scratch for these backends (index i in the table = backends[i]). Names are
  // the backends' identities: two backends of one name take turns in their listed order.
  void populate(std::span<const Backend> backends);

  std::uint32_t lookup(std::uint32_t hash) const { return entries_[hash % size()]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(entries_.size()); }
  std::span<const std::uint32_t> entries() const { return entries_; }

 private:
  std::vector<std::uint32_t> entries_;  // backend index per entry
};

bool is_prime(std::uint32_t n);

}  // namespace flowtrack
