#include "flowtrack/compact/cuckoo_filtable_builder.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "flowtrack/table/internal/cuckoo_path.hpp"

namespace flowtrack::compact {
namespace {

std::uint32_t filtable_buckets_for(std::uint32_t capacity, double max_load) {
  return std::max<std::uint32_t>(2, static_cast<std::uint32_t>(std::ceil(capacity / (kFiltableSlots * max_load))));
}

// Level 2 sized for twice the keys expected to collide: with n keys over b buckets of 4, a key shares a
// bucket with about 8 n / (4 b) others, each matching its fingerprint with odds 2^-f.
std::uint32_t level2_slots_for(std::uint32_t capacity, unsigned fingerprint_bits) {
  const double colliding = capacity * (1 - std::exp(-15.2 / std::ldexp(1.0, static_cast<int>(fingerprint_bits))));
  return std::bit_ceil(static_cast<std::uint32_t>(2 * colliding) + 16);
}

}  // namespace

template <CompactKey Key>
FiltableBuilder<Key>::FiltableBuilder(const FiltableConfig& config)
    : config_(config), rng_(config.seed ^ 0x2b7e151628aed2a6ull), capacity_(std::max<std::uint32_t>(8, config.capacity)) {
  rebuild(capacity_, level2_slots_for(capacity_, config.fingerprint_bits));
  rebuilds_ = 0;
}

template <CompactKey Key>
std::uint64_t FiltableBuilder<Key>::cell_of(std::uint32_t position) const {
  const std::uint32_t id = level1_[position];
  if (id == kNone) return 0;
  return items_[id].probe.fingerprint | (items_[id].value << shape_.fingerprint_bits);
}

template <CompactKey Key>
std::vector<std::uint32_t> FiltableBuilder<Key>::colliders(std::uint32_t id) const {
  std::vector<std::uint32_t> found;
  const Item& item = items_[id];
  for (const std::uint32_t b : item.probe.bucket) {
    for (const std::uint32_t other : avoid_[b]) {
      if (other != id && items_[other].probe.fingerprint == item.probe.fingerprint &&
          std::find(found.begin(), found.end(), other) == found.end()) {
        found.push_back(other);
      }
    }
  }
  return found;
}

template <CompactKey Key>
void FiltableBuilder<Key>::join_sets(std::uint32_t id) {
  const auto& b = items_[id].probe.bucket;
  avoid_[b[0]].push_back(id);
  if (b[1] != b[0]) avoid_[b[1]].push_back(id);
}

template <CompactKey Key>
void FiltableBuilder<Key>::leave_sets(std::uint32_t id) {
  for (const std::uint32_t b : items_[id].probe.bucket) {
    auto& set = avoid_[b];
    if (const auto it = std::find(set.begin(), set.end(), id); it != set.end()) {
      *it = set.back();
      set.pop_back();
    }
  }
}

template <CompactKey Key>
bool FiltableBuilder<Key>::place_level1(std::uint32_t id, FiltableMessage<Key>& message) {
  std::vector<std::uint32_t> touched;
  auto free_slot = [&](std::uint32_t bucket) {
    for (std::uint32_t s = 0; s < kFiltableSlots; ++s) {
      if (level1_[bucket * kFiltableSlots + s] == kNone) return CuckooSlot{bucket, s};
    }
    return CuckooSlot{};
  };
  auto alternate_of = [&](std::uint32_t bucket, std::uint32_t slot) {
    const auto& b = items_[level1_[bucket * kFiltableSlots + slot]].probe.bucket;
    return b[0] == bucket ? b[1] : b[0];
  };
  auto move = [&](CuckooSlot from, CuckooSlot to) {
    const std::uint32_t src = from.bucket * kFiltableSlots + from.slot, dst = to.bucket * kFiltableSlots + to.slot;
    level1_[dst] = level1_[src];
    level1_[src] = kNone;
    items_[level1_[dst]].position = dst;
    touched.push_back(src);
    touched.push_back(dst);
  };
  const auto& b = items_[id].probe.bucket;
  CuckooSlot hole = free_slot(b[0]);
  if (!hole.valid()) hole = free_slot(b[1]);
  if (!hole.valid()) hole = make_room<kFiltableSlots>(b[0], b[1], free_slot, alternate_of, move);
  if (!hole.valid()) return false;
  const std::uint32_t p = hole.bucket * kFiltableSlots + hole.slot;
  level1_[p] = id;
  items_[id].position = p;
  items_[id].level2 = false;
  touched.push_back(p);
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (const std::uint32_t t : touched) message.level1.push_back({t, cell_of(t)});
  return true;
}

template <CompactKey Key>
void FiltableBuilder<Key>::clear_level1(std::uint32_t id, FiltableMessage<Key>& message) {
  const std::uint32_t p = items_[id].position;
  level1_[p] = kNone;
  message.level1.push_back({p, 0});
}

template <CompactKey Key>
void FiltableBuilder<Key>::insert_level2(std::uint32_t id, FiltableMessage<Key>& message) {
  const std::uint32_t mask = shape_.level2_slots - 1;
  std::uint32_t p = level2_home(shape_, items_[id].key);
  while (level2_[p].used != 0) p = (p + 1) & mask;
  level2_[p] = {items_[id].key, items_[id].value, 1};
  level2_ids_[p] = id;
  ++level2_used_;
  items_[id].position = p;
  items_[id].level2 = true;
  message.level2_inserts.push_back({p, level2_[p]});
}

// Backward-shift deletion: later entries of the probe run move up, so no tombstones are needed.
template <CompactKey Key>
void FiltableBuilder<Key>::remove_level2(std::uint32_t id, FiltableMessage<Key>& message) {
  const std::uint32_t mask = shape_.level2_slots - 1;
  std::uint32_t hole = items_[id].position;
  for (std::uint32_t next = (hole + 1) & mask; level2_[next].used != 0; next = (next + 1) & mask) {
    const std::uint32_t home = level2_home(shape_, level2_[next].key);
    // The entry may move into the hole only if its home is not cyclically inside (hole, next].
    const bool home_after_hole = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
    if (home_after_hole) continue;
    level2_[hole] = level2_[next];
    level2_ids_[hole] = level2_ids_[next];
    items_[level2_ids_[hole]].position = hole;
    message.level2_removals.push_back({hole, level2_[hole]});
    hole = next;
  }
  level2_[hole] = {};
  level2_ids_[hole] = kNone;
  --level2_used_;
  message.level2_removals.push_back({hole, level2_[hole]});
}

template <CompactKey Key>
void FiltableBuilder<Key>::settle(std::uint32_t id, FiltableMessage<Key>& message) {
  const std::vector<std::uint32_t> others = colliders(id);
  if (others.empty()) {
    if (!place_level1(id, message)) insert_level2(id, message);
    return;
  }
  insert_level2(id, message);
  for (const std::uint32_t other : others) {
    if (items_[other].level2) continue;
    // Level 2 first, then the level-1 slot cleared: the lookup structure applies them in that order.
    const std::uint32_t old_position = items_[other].position;  // kNone: not placed yet (a rebuild)
    insert_level2(other, message);
    if (old_position != kNone) {
      level1_[old_position] = kNone;
      message.level1.push_back({old_position, 0});
    }
  }
}

template <CompactKey Key>
FiltableMessage<Key> FiltableBuilder<Key>::insert(const Key& key, std::uint64_t value) {
  value &= (1ull << shape_.value_bits) - 1;
  FiltableMessage<Key> message;
  if (const auto found = ids_.find(key); found != ids_.end()) {
    Item& item = items_[found->second];
    item.value = value;
    if (item.level2) {
      level2_[item.position].value = value;
      message.level2_inserts.push_back({item.position, level2_[item.position]});
    } else {
      message.level1.push_back({item.position, cell_of(item.position)});
    }
    return message;
  }
  std::uint32_t id;
  if (free_ids_.empty()) {
    id = static_cast<std::uint32_t>(items_.size());
    items_.push_back({});
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  items_[id] = {key, value, filtable_probe(shape_, key), kNone, false};
  ids_.emplace(key, id);
  if (static_cast<double>(ids_.size()) > config_.max_load * shape_.buckets * kFiltableSlots) {
    return rebuild(capacity_ * 2, shape_.level2_slots);
  }
  join_sets(id);
  settle(id, message);
  if (level2_crowded()) return rebuild(capacity_, shape_.level2_slots * 2);
  return message;
}

template <CompactKey Key>
FiltableMessage<Key> FiltableBuilder<Key>::erase(const Key& key) {
  FiltableMessage<Key> message;
  const auto found = ids_.find(key);
  if (found == ids_.end()) return message;
  const std::uint32_t id = found->second;
  ids_.erase(found);
  leave_sets(id);
  if (items_[id].level2) {
    remove_level2(id, message);
  } else {
    clear_level1(id, message);
  }
  // Keys that collided with this one alone go back to level 1.
  for (const std::uint32_t b : items_[id].probe.bucket) {
    for (const std::uint32_t other : std::vector<std::uint32_t>(avoid_[b])) {
      if (!items_[other].level2 || items_[other].probe.fingerprint != items_[id].probe.fingerprint) continue;
      if (!colliders(other).empty()) continue;
      FiltableMessage<Key> moved;
      const std::uint32_t l2 = items_[other].position;
      if (!place_level1(other, moved)) continue;
      // place_level1 marked the item as level 1; its level-2 entry is still at l2, removed after.
      const std::uint32_t l1 = items_[other].position;
      items_[other].position = l2;
      remove_level2(other, moved);
      items_[other].position = l1;
      items_[other].level2 = false;
      message.level1.insert(message.level1.end(), moved.level1.begin(), moved.level1.end());
      message.level2_removals.insert(message.level2_removals.end(), moved.level2_removals.begin(),
                                     moved.level2_removals.end());
    }
  }
  free_ids_.push_back(id);
  return message;
}

template <CompactKey Key>
std::optional<std::uint64_t> FiltableBuilder<Key>::value_of(const Key& key) const {
  const auto found = ids_.find(key);
  if (found == ids_.end()) return std::nullopt;
  return items_[found->second].value;
}

template <CompactKey Key>
bool FiltableBuilder<Key>::in_level2(const Key& key) const {
  const auto found = ids_.find(key);
  return found != ids_.end() && items_[found->second].level2;
}

template <CompactKey Key>
std::size_t FiltableBuilder<Key>::level2_size() const {
  return level2_used_;
}

template <CompactKey Key>
FiltableMessage<Key> FiltableBuilder<Key>::rebuild(std::uint32_t capacity, std::uint32_t level2_slots) {
  ++rebuilds_;
  capacity_ = std::max<std::uint32_t>(capacity, static_cast<std::uint32_t>(ids_.size()));
  for (;;) {
    shape_ = {rng_.next(), filtable_buckets_for(capacity_, config_.max_load), level2_slots, config_.fingerprint_bits,
              config_.value_bits};
    level1_.assign(std::size_t{shape_.buckets} * kFiltableSlots, kNone);
    level2_.assign(level2_slots, {});
    level2_ids_.assign(level2_slots, kNone);
    level2_used_ = 0;
    avoid_.assign(shape_.buckets, {});
    FiltableMessage<Key> scratch;
    for (const auto& [key, id] : ids_) {
      items_[id].probe = filtable_probe(shape_, key);
      join_sets(id);
    }
    for (const auto& [key, id] : ids_) {
      items_[id].level2 = false;
      items_[id].position = kNone;
    }
    bool fits = true;
    for (const auto& [key, id] : ids_) {
      if (level2_used_ >= level2_slots - 1) {
        fits = false;
        break;
      }
      if (items_[id].position == kNone) settle(id, scratch);
    }
    if (fits && !level2_crowded()) break;
    level2_slots *= 2;
  }
  FiltableMessage<Key> message;
  message.image = std::make_shared<const FiltableImage<Key>>(export_image());
  return message;
}

template <CompactKey Key>
FiltableImage<Key> FiltableBuilder<Key>::export_image() const {
  FiltableImage<Key> image{shape_, PackedCells(level1_.size(), shape_.fingerprint_bits + shape_.value_bits), level2_};
  for (std::uint32_t p = 0; p < level1_.size(); ++p) image.level1.set(p, cell_of(p));
  return image;
}

template class FiltableBuilder<std::uint64_t>;
template class FiltableBuilder<FlowKeyV4>;

}  // namespace flowtrack::compact
