#include "flowtrack/compact/othello_map.hpp"

#include <algorithm>
#include <bit>

namespace flowtrack::compact {

template <CompactKey Key>
OthelloConfig OthelloMap<Key>::index_config(std::uint32_t capacity, std::uint64_t seed) {
  OthelloConfig config;
  config.capacity = std::max<std::uint32_t>(2, capacity);
  // Positions up to twice the capacity: the index's own growth (at the capacity) keeps its width, and
  // the map widens it only when the positions outgrow that, so the keys are rebuilt once a doubling.
  config.value_bits = static_cast<unsigned>(std::bit_width(2 * config.capacity - 1));
  config.seed = seed;
  config.messages = false;   // the map reads its index itself: no lookup structure follows it
  config.key_index = false;  // a key's slot is its value in the index: the map updates by slot
  return config;
}

template <CompactKey Key>
OthelloMap<Key>::OthelloMap(std::uint32_t capacity, std::uint64_t seed) : seed_(seed), index_(index_config(capacity, seed)) {}

template <CompactKey Key>
std::optional<std::uint32_t> OthelloMap<Key>::find(const Key& key) const {
  const auto position = static_cast<std::uint32_t>(index_.lookup(key));
  if (position >= states_.size() || !(index_.key_at(position) == key)) return std::nullopt;
  return states_[position];
}

template <CompactKey Key>
bool OthelloMap<Key>::insert_or_assign(const Key& key, std::uint32_t state) {
  const auto position = static_cast<std::uint32_t>(index_.lookup(key));
  if (position < states_.size() && index_.key_at(position) == key) {
    states_[position] = state;
    return false;
  }
  if (states_.size() == (1ull << index_.shape().value_bits)) {
    // The positions outgrow the index bits: a wider index over the same keys, in the same order.
    std::vector<Key> keys(states_.size());
    std::vector<std::uint64_t> positions(states_.size());
    for (std::uint32_t p = 0; p < states_.size(); ++p) {
      keys[p] = index_.key_at(p);
      positions[p] = p;
    }
    index_ = OthelloBuilder<Key>(index_config(static_cast<std::uint32_t>(states_.size() * 2), ++seed_));
    index_.assign(keys, positions);
  }
  index_.append(key, states_.size());
  states_.push_back(state);
  return true;
}

template <CompactKey Key>
bool OthelloMap<Key>::erase(const Key& key) {
  if (!find(key)) return false;
  const auto position = static_cast<std::uint32_t>(index_.lookup(key));
  index_.erase_slot(position);  // moves the last key into `position`
  states_[position] = states_.back();
  states_.pop_back();
  if (position < states_.size()) index_.set_value(position, position);
  return true;
}

template class OthelloMap<std::uint64_t>;
template class OthelloMap<FlowKeyV4>;

}  // namespace flowtrack::compact
