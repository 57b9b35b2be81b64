// OthelloMap: an exact map from key to a 32-bit state, the control-plane structure of Concury.
//
// The states sit in a dense array; an index Othello maps each key to its position (index bits =
// ceil(log2 capacity)). find(k) reads the position from the Othello's two cells and confirms it by
// comparing the key stored there, so membership is exact with no hash table of its own. Erase moves the
// last entry into the hole and changes the moved key's index: an O(1) value change of the Othello.
// The Othello's graph depends only on the keys, so a data plane with other values per key (Concury's
// Dcodes) is a refill of the same graph: see OthelloBuilder::refill, reached through index().
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/othello_builder.hpp"

namespace flowtrack::compact {

template <CompactKey Key>
class OthelloMap {
 public:
  explicit OthelloMap(std::uint32_t capacity = 1024, std::uint64_t seed = 1);

  // True when the key is new.
  bool insert_or_assign(const Key& key, std::uint32_t state);
  bool erase(const Key& key);
  std::optional<std::uint32_t> find(const Key& key) const;
  // An insert or find of a key reads two lines that miss at scale, one after the other: the index's
  // cells, then the key stored at the position they give. A batch overlaps them in two stages a few
  // keys apart: prefetch_cells(k) first, prefetch_key(k) once its cells have arrived.
  [[gnu::always_inline]] void prefetch_cells(const Key& key) const { index_.prefetch(key); }
  [[gnu::always_inline]] void prefetch_key(const Key& key) const {
    const auto position = static_cast<std::uint32_t>(index_.lookup(key));
    if (position < states_.size()) __builtin_prefetch(&index_.key_at(position));
  }

  std::size_t size() const { return states_.size(); }
  const Key& key_at(std::uint32_t position) const { return index_.key_at(position); }
  std::uint32_t state_at(std::uint32_t position) const { return states_[position]; }
  const OthelloBuilder<Key>& index() const { return index_; }

 private:
  static OthelloConfig index_config(std::uint32_t capacity, std::uint64_t seed);

  std::uint64_t seed_;
  OthelloBuilder<Key> index_;  // key -> position in states_ (its slot order is the positions' order)
  std::vector<std::uint32_t> states_;
};

extern template class OthelloMap<std::uint64_t>;
extern template class OthelloMap<FlowKeyV4>;

}  // namespace flowtrack::compact
