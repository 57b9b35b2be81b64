// Ludo hashing's maintenance structure (the control plane): a (2,4)-cuckoo table of full keys and values
// whose buckets mirror the lookup structure's, each bucket's seed, the locator's Othello maintenance
// structure (key -> which of its two buckets), the overflow-seed table and the fallback table.
//
// Insert: cuckoo-insert (breadth-first search for the shortest displacement path); every key the path
// moves flips its locator bit; every bucket the path touches gets a new seed, found by trying 0, 1, ...
// until the bucket's keys land in distinct slots. Delete: free the slot (the bucket's seed stays valid
// for the keys left). Value change: rewrite one bucket. Each returns the message for LudoLookup; unlike
// the thesis, deletes send one bucket write too (the slot zeroed), so that a lookup structure fed every
// message stays bit-identical to a fresh export.
//
// Load: the table grows (twice the buckets) before an insert would pass max_load, and shrinks (half)
// when a delete leaves it below min_load; both are rebuilds that send a whole image. A failed cuckoo
// insertion parks the key in the fallback table (kLudoFallbackSlots keys; a rebuild when it is full).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/ludo_lookup.hpp"
#include "flowtrack/compact/othello_builder.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::compact {

struct LudoConfig {
  std::uint32_t capacity = 1024;  // keys the first table is sized for (at max_load)
  unsigned value_bits = 8;        // 1..32
  unsigned seed_bits = 5;         // 2..8; the largest value marks an overflowing bucket
  double max_load = 0.95;
  double min_load = 0.25;         // shrink below this (never below the first capacity)
  bool displace = true;           // false: no cuckoo paths, a full pair of buckets goes to the fallback (tests)
  std::uint64_t seed = 1;
};

template <CompactKey Key>
class LudoBuilder {
 public:
  explicit LudoBuilder(const LudoConfig& config);

  LudoMessage<Key> insert(const Key& key, std::uint64_t value);  // insert or change the value
  LudoMessage<Key> erase(const Key& key);

  std::optional<std::uint64_t> value_of(const Key& key) const;
  std::size_t size() const { return size_; }
  std::uint32_t buckets() const { return shape_.buckets; }
  double load() const { return static_cast<double>(size_) / (static_cast<double>(shape_.buckets) * kLudoSlots); }
  std::size_t overflowing_buckets() const;
  std::size_t fallback_size() const;
  std::size_t rebuilds() const { return rebuilds_; }
  // Cells of the displacement paths of all inserts so far (path length statistics for the bench).
  std::size_t moves() const { return moves_; }

  LudoImage<Key> export_image() const;

  // Invariant check for the tests: every bucket's seed sends its keys to distinct slots.
  bool seeds_valid() const;

 private:
  struct Item {
    Key key;
    std::uint64_t value;
  };

  std::array<std::uint32_t, 2> candidates(const Key& key) const;
  std::uint32_t choice_of(const Key& key, std::uint32_t bucket) const { return candidates(key)[0] == bucket ? 0 : 1; }
  std::optional<std::uint32_t> position_of(const Key& key) const;  // bucket * 4 + slot
  // Puts the item in one of its buckets, displacing others if allowed; records touched buckets and
  // moved keys (into `message` when it is not null). False when no room was found.
  bool place(const Item& item, std::vector<std::uint32_t>& touched, LudoMessage<Key>* message);
  std::optional<std::uint32_t> find_seed(std::uint32_t bucket) const;
  // New seed for a touched bucket, its overflow entry, and its bucket write. False: rebuild needed.
  bool reseed(std::uint32_t bucket, LudoMessage<Key>* message);
  bool set_overflow(std::uint32_t bucket, std::optional<std::uint32_t> seed, LudoMessage<Key>* message);
  LudoBucketWrite bucket_write(std::uint32_t bucket) const;
  // Everything into a table for `capacity` keys (plus `extra`); the message carries the image.
  LudoMessage<Key> rebuild(std::uint32_t capacity, std::optional<Item> extra);
  void finish_locator(LudoMessage<Key>& message, bool locator_rebuilt);

  LudoConfig config_;
  LudoShape shape_;
  Random rng_;
  std::size_t size_ = 0, rebuilds_ = 0, moves_ = 0;
  std::uint32_t capacity_;
  std::vector<Key> keys_;                // bucket * 4 + slot
  std::vector<std::uint64_t> values_;
  std::vector<std::uint8_t> used_;
  std::vector<std::uint8_t> seeds_;      // the real seed, 0..255
  std::vector<LudoOverflowEntry> overflow_;  // mirror of the lookup structure's overflow cuckoo table
  std::array<FallbackEntry<Key>, kLudoFallbackSlots> fallback_{};
  std::unique_ptr<OthelloBuilder<Key>> locator_;
};

extern template class LudoBuilder<std::uint64_t>;
extern template class LudoBuilder<FlowKeyV4>;

}  // namespace flowtrack::compact
