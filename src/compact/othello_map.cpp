#include "flowtrack/compact/othello_map.hpp"

#include <algorithm>
#include <bit>

#include "flowtrack/util/assert.hpp"

namespace flowtrack::compact {

template <CompactKey Key>
OthelloConfig OthelloMap<Key>::index_config(std::uint32_t capacity, std::uint64_t seed) {
  OthelloConfig config;
  config.capacity = capacity;
  // Positions for twice the capacity, or more (a power of two): the map widens them only past that,
  // so the index's own growths (at the capacity) keep its width.
  config.value_bits = static_cast<unsigned>(std::bit_width(2 * capacity - 1));
  config.seed = seed;
  // Free cells and trees' roots hold random values, so that the positions the cells give new keys are
  // spread over the entries (with zeros they would all start at 0 and probe the same run).
  config.random_fill = true;
  config.messages = false;   // the map reads its index itself: no lookup structure follows it
  config.key_index = false;  // the map knows each key's slot: it updates by slot
  return config;
}

template <CompactKey Key>
OthelloMap<Key>::OthelloMap(std::uint32_t capacity, std::uint64_t seed)
    : seed_(seed), capacity_(std::max<std::uint32_t>(2, capacity)), index_(index_config(capacity_, seed)),
      entries_(std::size_t{1} << index_.shape().value_bits) {}

template <CompactKey Key>
std::optional<std::uint32_t> OthelloMap<Key>::position_of(const Key& key) const {
  const auto position = static_cast<std::uint32_t>(index_.lookup(key));  // < entries_.size(): value bits
  if (const Entry& e = entries_[position]; e.slot != kFree && e.key == key) return position;
  for (const std::uint32_t parked : parked_) {
    if (entries_[parked].key == key) return parked;
  }
  return std::nullopt;
}

template <CompactKey Key>
bool OthelloMap<Key>::restate(OthelloImage& image, const Key& key) const {
  const auto position = position_of(key);
  if (!position || entries_[*position].slot == kParked) return false;
  if (!index_.restate(image, entries_[*position].slot, entries_[*position].state)) return false;
  // A parked key's edge is in no tree, so the tree changed may hold one of its cells.
  const std::uint64_t mask = (1ull << image.shape.value_bits) - 1;
  return std::all_of(parked_.begin(), parked_.end(), [&](std::uint32_t parked) {
    const OthelloProbe p = othello_probe(image.shape, entries_[parked].key);
    return (((image.cells.get(p.a) ^ image.cells.get(p.b)) >> image.shape.taken_bits()) & mask) == entries_[parked].state;
  });
}

template <CompactKey Key>
std::optional<std::uint32_t> OthelloMap<Key>::find(const Key& key) const {
  const auto position = position_of(key);
  if (!position) return std::nullopt;
  return entries_[*position].state;
}

template <CompactKey Key>
void OthelloMap<Key>::reindex(std::uint32_t capacity) {
  const unsigned old_bits = index_.shape().value_bits;
  const unsigned new_bits = index_config(capacity, seed_).value_bits;
  FLOWTRACK_ASSERT(new_bits == old_bits || new_bits == old_bits + 1, "a reindex keeps or doubles the positions");
  // With twice the positions, position p moves to 2p or 2p + 1 (in turn): kept where they were, the
  // keys would crowd the lower half, which new keys fill further, and the probes for a free position
  // there would grow long with every widening.
  const unsigned spread = new_bits - old_bits;
  std::vector<Entry> entries(std::size_t{1} << new_bits);
  std::vector<Key> keys;
  std::vector<std::uint64_t> positions;
  keys.reserve(size());
  positions.reserve(size());
  for (std::uint32_t p = 0; p < entries_.size(); ++p) {
    if (entries_[p].slot == kFree) continue;
    const std::uint32_t to = (p << spread) | (spread & static_cast<std::uint32_t>(keys.size()));
    entries[to] = {entries_[p].key, entries_[p].state, static_cast<std::uint32_t>(keys.size())};  // its slot in the new index
    keys.push_back(entries_[p].key);
    positions.push_back(to);
  }
  entries_ = std::move(entries);
  parked_.clear();
  capacity_ = capacity;
  index_ = OthelloBuilder<Key>(index_config(capacity_, ++seed_));
  index_.assign(keys, positions);
}

template <CompactKey Key>
bool OthelloMap<Key>::insert_or_assign(const Key& key, std::uint32_t state) {
  if (const auto position = position_of(key)) {
    entries_[*position].state = state;
    return false;
  }
  if (2 * (size() + 1) > entries_.size()) reindex(2 * capacity_);
  const auto mask = static_cast<std::uint32_t>(entries_.size() - 1);
  // The position the cells give the key, or the next free one (at least half are free).
  auto position = static_cast<std::uint32_t>(index_.lookup(key));
  while (entries_[position].slot != kFree) position = (position + 1) & mask;
  const std::uint32_t slot = index_.next_slot();
  if (index_.append_unless_cycle(key, position)) {
    entries_[position] = {key, state, slot};
  } else {
    entries_[position] = {key, state, kParked};
    parked_.push_back(position);
    if (parked_.size() == kMaxParked) reindex(capacity_);
  }
  return true;
}

template <CompactKey Key>
bool OthelloMap<Key>::erase(const Key& key) {
  const auto position = position_of(key);
  if (!position) return false;
  Entry& e = entries_[*position];
  if (e.slot == kParked) {
    parked_.erase(std::find(parked_.begin(), parked_.end(), *position));
  } else {
    index_.erase_slot(e.slot);  // a hole in the index: no other key moves
  }
  e.slot = kFree;
  return true;
}

template class OthelloMap<std::uint64_t>;
template class OthelloMap<FlowKeyV4>;

}  // namespace flowtrack::compact
