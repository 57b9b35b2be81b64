// OthelloMap: an exact map from key to a 32-bit state, the control-plane structure of Concury.
//
// The states sit in a dense array; an index Othello maps each key to its position (index bits =
// ceil(log2 capacity)). find(k) reads the position from the Othello's two cells and confirms it by
// comparing the key stored there, so membership is exact with no hash table of its own. Erase moves the
// last entry into the hole and changes the moved key's index: an O(1) value change of the Othello.
// The Othello's graph depends only on the keys, so a data plane with other values per key (Concury's
// Dcodes) is a refill of the same graph: see OthelloBuilder::refill, reached through index().
//
// Growth is incremental. When the index is full (its capacity), a second index of twice the capacity
// starts: every new key goes there, and each new key also moves kMovesPerInsert keys from the full
// index's last slots into it; when the full one is empty, the wider one takes its place. So no insert
// rebuilds the keys at once (a rebuild's work, spread over the next half-capacity inserts), at the cost
// of two indexes to ask while a growth lasts. Positions (key_at, state_at) number the full index's
// slots, then the wider one's; they hold between updates, not across one that adds or removes a key.
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
  [[gnu::always_inline]] void prefetch_cells(const Key& key) const {
    full_.index.prefetch(key);
    if (wider_) wider_->index.prefetch(key);
  }
  [[gnu::always_inline]] void prefetch_key(const Key& key) const {
    full_.prefetch_key(key);
    if (wider_) wider_->prefetch_key(key);
  }

  std::size_t size() const { return full_.states.size() + (wider_ ? wider_->states.size() : 0); }
  const Key& key_at(std::uint32_t position) const;
  std::uint32_t state_at(std::uint32_t position) const;
  // True while a growth is under way (two indexes).
  bool growing() const { return wider_.has_value(); }
  // The index of every key, in position order. A growth under way is ended first (every key left is
  // moved): the map's content stays, its positions are renumbered, so this const call must not overlap
  // another call.
  const OthelloBuilder<Key>& index() const;

 private:
  // Keys a new key moves during a growth: the wider index then holds at most 1.5x the keys the full
  // one held when the growth began, within its capacity (2x), so it never grows itself meanwhile.
  static constexpr std::uint32_t kMovesPerInsert = 2;

  // An index and its slots' states (the index's value of a key is its slot).
  struct Part {
    OthelloBuilder<Key> index;
    std::vector<std::uint32_t> states;

    // The key's slot here, if this part holds it.
    std::optional<std::uint32_t> slot_of(const Key& key) const {
      const auto slot = static_cast<std::uint32_t>(index.lookup(key));
      if (slot >= states.size() || !(index.key_at(slot) == key)) return std::nullopt;
      return slot;
    }
    [[gnu::always_inline]] void prefetch_key(const Key& key) const {
      const auto slot = static_cast<std::uint32_t>(index.lookup(key));
      if (slot < states.size()) __builtin_prefetch(&index.key_at(slot));
    }
    void append(const Key& key, std::uint32_t state);
    void erase_slot(std::uint32_t slot);  // moves the last slot's key and state into `slot`
  };

  static OthelloConfig index_config(std::uint32_t capacity, std::uint64_t seed);
  // Moves up to `count` keys from the full index's last slots into the wider one; the wider one takes
  // the full one's place once it is empty. Const for index() (the parts are mutable): the content stays.
  void move(std::uint32_t count) const;

  std::uint64_t seed_;
  // Mutable for index(), which ends a growth under way (the content does not change).
  mutable Part full_;                  // every key, or during a growth those not moved yet
  mutable std::optional<Part> wider_;  // during a growth: twice full_'s capacity, the moved and new keys
};

extern template class OthelloMap<std::uint64_t>;
extern template class OthelloMap<FlowKeyV4>;

}  // namespace flowtrack::compact
