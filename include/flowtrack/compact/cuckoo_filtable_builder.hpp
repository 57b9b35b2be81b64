// Cuckoo Filtable's maintenance structure (the control plane): every valid key with its value,
// fingerprint, candidate buckets and location (a level-1 slot or a level-2 position), and per bucket a
// collision-avoidance set: the ids of all valid keys having that bucket as a candidate, wherever they sit.
//
// Invariant (zero collisions between valid keys): a key is in level 1 only if no other valid key has the
// same fingerprint and shares a candidate bucket with it. On insert, a key whose fingerprint meets one in
// either bucket's set goes to level 2 and takes the colliding keys with it; on delete, a level-2 key left
// with no collision moves back to level 1. Level 2 also takes the (rare) keys that find no level-1 room.
//
// Each update returns the message for FiltableLookup. The table grows (a rebuild sending a whole image)
// before an insert would pass max_load, and level 2 doubles when it passes 3/4.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/cuckoo_filtable_lookup.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::compact {

struct FiltableConfig {
  std::uint32_t capacity = 1024;
  unsigned fingerprint_bits = 12;  // 2..16
  unsigned value_bits = 8;         // 1..32
  double max_load = 0.95;
  std::uint64_t seed = 1;
};

template <CompactKey Key>
class FiltableBuilder {
 public:
  explicit FiltableBuilder(const FiltableConfig& config);

  FiltableMessage<Key> insert(const Key& key, std::uint64_t value);  // insert or change the value
  FiltableMessage<Key> erase(const Key& key);

  std::optional<std::uint64_t> value_of(const Key& key) const;
  bool in_level2(const Key& key) const;
  std::size_t size() const { return ids_.size(); }
  std::size_t level2_size() const;
  std::size_t rebuilds() const { return rebuilds_; }
  const FiltableShape& shape() const { return shape_; }

  FiltableImage<Key> export_image() const;

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Item {
    Key key;
    std::uint64_t value;
    FiltableProbe probe;
    std::uint32_t position;  // level-1 slot or level-2 position
    bool level2;
  };

  std::uint64_t cell_of(std::uint32_t position) const;
  std::vector<std::uint32_t> colliders(std::uint32_t id) const;
  // Adds a fresh item (already in the avoidance sets) where the invariant wants it.
  void settle(std::uint32_t id, FiltableMessage<Key>& message);
  bool place_level1(std::uint32_t id, FiltableMessage<Key>& message);
  void insert_level2(std::uint32_t id, FiltableMessage<Key>& message);
  void remove_level2(std::uint32_t id, FiltableMessage<Key>& message);
  void clear_level1(std::uint32_t id, FiltableMessage<Key>& message);
  void join_sets(std::uint32_t id);
  void leave_sets(std::uint32_t id);
  bool level2_crowded() const { return level2_used_ * 4 > level2_.size() * 3; }
  FiltableMessage<Key> rebuild(std::uint32_t capacity, std::uint32_t level2_slots);

  FiltableConfig config_;
  FiltableShape shape_;
  Random rng_;
  std::size_t rebuilds_ = 0;
  std::uint32_t capacity_;
  std::vector<Item> items_;
  std::vector<std::uint32_t> free_ids_;
  std::unordered_map<Key, std::uint32_t, KeyHasher> ids_;
  std::vector<std::uint32_t> level1_;                // per slot: item id or kNone
  std::vector<Level2Entry<Key>> level2_;             // mirror of the lookup structure's level 2
  std::vector<std::uint32_t> level2_ids_;            // per level-2 position: item id or kNone
  std::size_t level2_used_ = 0;
  std::vector<std::vector<std::uint32_t>> avoid_;    // per bucket: ids of the valid keys with it as a candidate
};

extern template class FiltableBuilder<std::uint64_t>;
extern template class FiltableBuilder<FlowKeyV4>;

}  // namespace flowtrack::compact
