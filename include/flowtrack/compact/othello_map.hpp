// OthelloMap: an exact map from key to a 32-bit state, the control-plane structure of Concury.
//
// An index Othello maps each key to its position in an array of entries (key, state, the key's slot in
// the index). find(k) reads the position from the Othello's two cells and confirms it by comparing the
// key stored there, so membership is exact with no hash table of its own.
// Positions are the map's to choose, and it chooses to walk no tree of the index's graph:
// - An insert takes the position the index's cells already give the new key when that one is free
//   (the entries are at least twice the keys, so that is most inserts): the key's value is then what
//   its cells answer, and linking its edge changes no cell. Otherwise it takes the next free position,
//   and the index xors one tree.
// - A key keeps its position until erased, so an erase changes no value either: it unlinks the key's
//   edge, and its slot in the index is a hole the next insert takes (OthelloBuilder's stable slots).
// - A key whose edge would close a cycle is parked: the entry holds it, the index does not, and finds
//   look through the few parked positions. The index is rebuilt (new seed, O(keys)) once kMaxParked
//   are parked, or when its graph must hold every key (refill_states), where Othello rebuilds for
//   each: under churn at full load about one insert in 1400 closes a cycle, and those rebuilds were
//   most of the map's instructions (bench compact under load, 1M connections over 128 VIPs).
// The Othello's graph depends only on the keys, so a data plane with other values per key (Concury's
// Dcodes) is a refill of the same graph (refill_states).
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
  // cells, then the entry at the position they give. A batch overlaps them in two stages a few keys
  // apart: prefetch_cells(k) first, prefetch_key(k) once its cells have arrived.
  [[gnu::always_inline]] void prefetch_cells(const Key& key) const { index_.prefetch(key); }
  [[gnu::always_inline]] void prefetch_key(const Key& key) const { __builtin_prefetch(&entries_[index_.lookup(key)]); }

  std::size_t size() const { return index_.size() + parked_.size(); }
  std::size_t parked() const { return parked_.size(); }
  // Every key held with its state, in position order: visit(key, state), where the non-const form
  // passes the state by reference for the visitor to change.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for_each_entry(*this, visit);
  }
  template <class Visit>
  void for_each(Visit&& visit) {
    for_each_entry(*this, visit);
  }
  // The index's graph filled with the keys' states, value_bits of each (OthelloBuilder::refill); the
  // parked keys join the graph first.
  OthelloImage refill_states(unsigned value_bits, std::uint64_t fill_seed, const OthelloImage* previous) {
    if (!parked_.empty()) reindex(capacity_);
    return index_.refill(
        value_bits, [&](std::uint32_t slot) { return std::uint64_t{entries_[index_.value_at(slot)].state}; }, fill_seed, previous);
  }
  // Brings `image`, a refill_states of this map whose graph has not been rebuilt since, to answer the
  // key's state (changed by insert_or_assign) with every other key's answer kept: one tree of cells
  // changed (OthelloBuilder::restate). False, the image then to be discarded, when it cannot: the key
  // is parked (in no tree), the graph was rebuilt, or a parked key's answer would change.
  bool restate(OthelloImage& image, const Key& key) const;
  const OthelloBuilder<Key>& index() const { return index_; }

 private:
  static constexpr std::uint32_t kFree = ~std::uint32_t{0};
  static constexpr std::uint32_t kParked = kFree - 1;
  static constexpr std::size_t kMaxParked = 16;
  // A position's entry. Invariant: slot is kFree at a free position, kParked at a parked key's (listed
  // in parked_), else the key's slot in the index, whose value is this position.
  struct Entry {
    Key key{};
    std::uint32_t state = 0;
    std::uint32_t slot = kFree;
  };
  template <class Self, class Visit>
  static void for_each_entry(Self& self, Visit& visit) {
    for (auto& e : self.entries_) {
      if (e.slot != kFree) visit(e.key, e.state);
    }
  }
  static OthelloConfig index_config(std::uint32_t capacity, std::uint64_t seed);
  std::optional<std::uint32_t> position_of(const Key& key) const;  // when the map holds the key
  // A new index of `capacity` over every key held, parked ones included. The positions follow the
  // capacity (twice it or more): the same ones, or twice as many with the keys spread over them.
  void reindex(std::uint32_t capacity);

  std::uint64_t seed_;
  std::uint32_t capacity_;
  OthelloBuilder<Key> index_;  // key -> position
  std::vector<Entry> entries_;  // 2^(the index's value bits): at least twice the keys held
  std::vector<std::uint32_t> parked_;  // positions of parked keys, fewer than kMaxParked
};

extern template class OthelloMap<std::uint64_t>;
extern template class OthelloMap<FlowKeyV4>;

}  // namespace flowtrack::compact
