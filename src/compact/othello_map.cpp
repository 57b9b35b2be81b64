#include "flowtrack/compact/othello_map.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace flowtrack::compact {

template <CompactKey Key>
OthelloConfig OthelloMap<Key>::index_config(std::uint32_t capacity, std::uint64_t seed) {
  OthelloConfig config;
  config.capacity = std::max<std::uint32_t>(2, capacity);
  // Slots below the capacity: an index takes no more keys (a growth starts instead); one bit to spare
  // for a rehash that doubles the capacity itself.
  config.value_bits = static_cast<unsigned>(std::bit_width(2 * config.capacity - 1));
  config.seed = seed;
  config.messages = false;   // the map reads its index itself: no lookup structure follows it
  config.key_index = false;  // a key's slot is its value in the index: the map updates by slot
  return config;
}

template <CompactKey Key>
void OthelloMap<Key>::Part::append(const Key& key, std::uint32_t state) {
  index.append(key, states.size());
  states.push_back(state);
}

template <CompactKey Key>
void OthelloMap<Key>::Part::erase_slot(std::uint32_t slot) {
  index.erase_slot(slot);  // moves the last key into `slot`
  states[slot] = states.back();
  states.pop_back();
  if (slot < states.size()) index.set_value(slot, slot);
}

template <CompactKey Key>
OthelloMap<Key>::OthelloMap(std::uint32_t capacity, std::uint64_t seed)
    : seed_(seed), full_{OthelloBuilder<Key>(index_config(capacity, seed)), {}} {}

template <CompactKey Key>
std::optional<std::uint32_t> OthelloMap<Key>::find(const Key& key) const {
  if (wider_) {
    if (const auto slot = wider_->slot_of(key)) return wider_->states[*slot];
  }
  if (const auto slot = full_.slot_of(key)) return full_.states[*slot];
  return std::nullopt;
}

template <CompactKey Key>
const Key& OthelloMap<Key>::key_at(std::uint32_t position) const {
  const std::size_t in_full = full_.states.size();
  return position < in_full ? full_.index.key_at(position) : wider_->index.key_at(static_cast<std::uint32_t>(position - in_full));
}

template <CompactKey Key>
std::uint32_t OthelloMap<Key>::state_at(std::uint32_t position) const {
  const std::size_t in_full = full_.states.size();
  return position < in_full ? full_.states[position] : wider_->states[position - in_full];
}

template <CompactKey Key>
bool OthelloMap<Key>::insert_or_assign(const Key& key, std::uint32_t state) {
  for (Part* part : {wider_ ? &*wider_ : nullptr, &full_}) {
    if (part == nullptr) continue;
    if (const auto slot = part->slot_of(key)) {
      part->states[*slot] = state;
      return false;
    }
  }
  // The full index takes keys up to its capacity, and never more than its value bits can number (a
  // rehash that found no acyclic graph may have doubled the capacity, not the width).
  const std::size_t room = std::min<std::size_t>(full_.index.capacity(), std::size_t{1} << full_.index.shape().value_bits);
  if (!wider_ && full_.states.size() >= room) {
    wider_.emplace(Part{OthelloBuilder<Key>(index_config(2 * full_.index.capacity(), ++seed_)), {}});
  }
  if (!wider_) {
    full_.append(key, state);
    return true;
  }
  wider_->append(key, state);
  move(kMovesPerInsert);
  return true;
}

template <CompactKey Key>
void OthelloMap<Key>::move(std::uint32_t count) const {
  // The keys moved next sit in the full index's last slots: their cells in both indexes are fetched a
  // few moves ahead (the next insert's moves, as a learn comes every few hundred nanoseconds at most).
  constexpr std::uint32_t kAhead = 4;
  for (std::uint32_t n = 0; n < count && !full_.states.empty(); ++n) {
    const auto last = static_cast<std::uint32_t>(full_.states.size() - 1);
    if (last >= kAhead) {
      const Key& ahead = full_.index.key_at(last - kAhead);
      full_.index.prefetch(ahead);
      wider_->index.prefetch(ahead);
    }
    const Key key = full_.index.key_at(last);
    const std::uint32_t state = full_.states[last];
    full_.erase_slot(last);
    wider_->append(key, state);
  }
  if (full_.states.empty()) {
    full_ = std::move(*wider_);
    wider_.reset();
  }
}

template <CompactKey Key>
const OthelloBuilder<Key>& OthelloMap<Key>::index() const {
  if (wider_) move(static_cast<std::uint32_t>(full_.states.size()));
  return full_.index;
}

template <CompactKey Key>
bool OthelloMap<Key>::erase(const Key& key) {
  for (Part* part : {wider_ ? &*wider_ : nullptr, &full_}) {
    if (part == nullptr) continue;
    if (const auto slot = part->slot_of(key)) {
      part->erase_slot(*slot);
      // Erases alone may empty the full index during a growth: the wider one takes its place.
      if (wider_ && full_.states.empty()) move(0);
      return true;
    }
  }
  return false;
}

template class OthelloMap<std::uint64_t>;
template class OthelloMap<FlowKeyV4>;

}  // namespace flowtrack::compact
