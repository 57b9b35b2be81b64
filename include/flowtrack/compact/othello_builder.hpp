// Othello's maintenance structure (the control plane): the full keys and values, and the bipartite
// graph G with one vertex per cell of A and B and one edge (ha(k), hb(k)) per key.
//
// Invariant: G is acyclic. Then every connected component is a tree and can be filled from any cell:
// give the cell a value and walk the tree, setting each far cell to (near cell xor the edge's value).
// Inserting an edge between two different trees only needs the smaller tree xor-ed by one constant;
// an edge inside one tree would close a cycle, and the whole structure is rebuilt with a new seed.
// Connectivity is tested with union-find over the cells (union by size, path halving), whose sizes
// also tell which tree is the smaller, so an insert walks that tree only, and only when its cells must
// change. A delete may split a tree, which union-find cannot undo: after one, a set may hold several
// trees (never part of one) until the next rebuild renews the sets, so cells of one set are confirmed
// connected by walking the tree of one of them (trees have O(log n) cells w.h.p.: the arrays hold 2.33
// cells per key, below the random graph's giant-component threshold); that walk's tree is then the one
// an insert fixes.
//
// Slots are stable: a key keeps its slot from insert to erase, and an erased key's slot is a hole that
// the next insert takes (the last freed first). So an owner whose values are the slots themselves
// (OthelloMap: value = position) never changes a value on a delete, which would cost a tree walk.
//
// Every update returns the message that brings a lookup structure (OthelloLookup) from the previous
// state to the new one: absolute cell writes, or a whole image after a rebuild.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/othello_lookup.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::compact {

struct OthelloConfig {
  std::uint32_t capacity = 1024;  // keys the arrays are sized for; doubles when exceeded
  unsigned value_bits = 8;        // 1..32
  unsigned fingerprint_bits = 0;  // 0..24
  bool emptiness = false;         // the taken bit per cell (alien detection)
  bool random_fill = false;       // free cells and tree roots get random values (uniform alien answers)
  bool messages = true;           // updates return messages; off for an index no lookup structure follows
  // A hash map key -> slot, for the updates by key (insert, erase, value_of, slot_of). Off for an owner
  // that knows every key's slot and updates by slot only (OthelloMap): a learn then allocates nothing.
  bool key_index = true;
  std::uint64_t seed = 1;
};

template <CompactKey Key>
class OthelloBuilder {
 public:
  explicit OthelloBuilder(const OthelloConfig& config);

  // Inserts the key or changes its value. Values are masked to value_bits. (Every update's message is
  // empty when the configuration turns messages off.) The updates and queries by key need key_index.
  OthelloMessage insert(const Key& key, std::uint64_t value);
  // Removes the key; survivors' answers do not change (only taken bits may be cleared).
  OthelloMessage erase(const Key& key);
  // The same updates by slot, for an owner that knows each key's slot (any configuration):
  // append adds a key that is no member, in slot next_slot(); set_value changes the value of a slot's
  // key; erase_slot removes a slot's key and leaves the slot a hole (no other key moves).
  OthelloMessage append(const Key& key, std::uint64_t value);
  // append, but a key whose edge would close a cycle is refused (false, nothing changed) where append
  // rebuilds: for an owner that keeps such keys aside and rebuilds once for many (OthelloMap).
  bool append_unless_cycle(const Key& key, std::uint64_t value);
  OthelloMessage set_value(std::uint32_t slot, std::uint64_t value);
  OthelloMessage erase_slot(std::uint32_t slot);
  // Replaces the whole content (distinct keys) in one construction: the message carries the image.
  OthelloMessage assign(std::span<const Key> keys, std::span<const std::uint64_t> values);

  std::optional<std::uint64_t> value_of(const Key& key) const;
  // A[ha(k)] xor B[hb(k)] from the control plane's own arrays (value bits; arbitrary for an alien).
  std::uint64_t lookup(const Key& key) const {
    const OthelloProbe p = othello_probe(shape_, key);
    return (payload(p.a) ^ payload(p.b)) & ((1ull << shape_.value_bits) - 1);
  }
  // Starts loading what an update of the key reads first (its two cells, with their edge lists and
  // union-find entries), so that a batch of updates overlaps its misses: call it a few keys ahead.
  // Always inlined, as every prefetch-only function here must be: GCC 12's pure-const analysis takes
  // a function whose only effect is a prefetch for one with no effect, and drops the calls.
  [[gnu::always_inline]] void prefetch(const Key& key) const {
    const OthelloProbe p = othello_probe(shape_, key);
    __builtin_prefetch(&cells_[p.a]);
    __builtin_prefetch(&cells_[p.b]);
  }
  std::size_t size() const { return keys_.size() - free_.size(); }  // keys held
  std::uint32_t capacity() const { return capacity_; }
  const OthelloShape& shape() const { return shape_; }
  std::size_t rebuilds() const { return rebuilds_; }

  // Slots 0..slots()-1, each a key's (live) or a hole; holes exist only after erases, and the next
  // appends fill them: with no hole, the slots are 0..size()-1. What OthelloMap indexes by.
  std::optional<std::uint32_t> slot_of(const Key& key) const;
  std::uint32_t slots() const { return static_cast<std::uint32_t>(keys_.size()); }
  bool live(std::uint32_t slot) const { return edges_[slot].a != kHole; }
  std::uint32_t next_slot() const { return free_.empty() ? slots() : free_.back(); }
  const Key& key_at(std::uint32_t slot) const { return keys_[slot]; }  // a live slot's
  std::uint64_t value_at(std::uint32_t slot) const { return values_[slot]; }  // a live slot's

  // The lookup structure's arrays as the control plane holds them.
  OthelloImage export_image() const;
  // The same graph (seed, sizes, edges) filled with other values: slot -> value of value_bits bits.
  // Never fails: the graph is acyclic whatever the values (what Concury's rebuilds rely on). Each tree
  // is filled from one cell, its root, and each free cell is a root: a root keeps its value in
  // `previous` (an earlier refill of the same seed and sizes), else gets random bits. So a tree whose
  // edges the earlier arrays already satisfy keeps every cell, and a key that is no member keeps its
  // answer unless one of its cells lies in a tree whose edges changed.
  template <class ValueOfSlot>
  OthelloImage refill(unsigned value_bits, ValueOfSlot&& value_of_slot, std::uint64_t fill_seed,
                      const OthelloImage* previous = nullptr) const;
  // Brings a refill of this graph (its seed and sizes) to answer `value` for the key at `slot` with
  // every other edge's answer kept, as set_value does to the control plane's own arrays: the tree on
  // B's side of the slot's edge xor-ed by the change. O(that tree), not O(the arrays) as a refill is.
  // False, with the image unchanged, when it is of other sizes or seed, or the slot holds no key.
  bool restate(OthelloImage& image, std::uint32_t slot, std::uint64_t value) const;

  // Invariant checks for the tests: G has no cycle and every key's cells give its value.
  bool acyclic() const;

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::uint32_t kSetRoot = 1u << 31;  // Cell::set of a union-find root (cells < 2^31)
  static constexpr std::uint32_t kHole = kNone;        // Edge::a of a hole (a free slot, in no edge list)
  // A cell of A or B and what the control plane keeps beside it, one 16-byte record so that an update
  // reads one line a cell it touches: the cell's bits (taken bit, then payload), the first slot of its
  // edge list, and its union-find entry.
  struct Cell {
    std::uint64_t bits = 0;
    std::uint32_t head = kNone;
    std::uint32_t set = kSetRoot | 1;  // the parent cell, or at a root kSetRoot | the set's size (an upper bound)
  };
  // A key's edge: its two cells (B's offset by size_a) and the next slot in the edge list of each.
  struct Edge {
    std::uint32_t a, b;
    std::uint32_t next_a, next_b;
  };

  std::uint64_t stored_value(std::uint32_t slot) const;  // value | fingerprint << value_bits
  std::uint64_t payload(std::uint32_t cell) const { return cells_[cell].bits >> shape_.taken_bits(); }
  void set_payload(std::uint32_t cell, std::uint64_t payload);
  void set_taken(std::uint32_t cell, bool taken);
  // The cells of the tree holding `cell`, ignoring the edge of `skip_slot` (in a scratch buffer that
  // the next walk reuses).
  const std::vector<std::uint32_t>& component(std::uint32_t cell, std::uint32_t skip_slot) const;
  // Union-find over the cells: the root of a cell's set; sets joined by an edge.
  std::uint32_t root_of(std::uint32_t cell);
  std::uint32_t set_size(std::uint32_t root) const { return cells_[root].set & ~kSetRoot; }
  void join(std::uint32_t a, std::uint32_t b);
  void link(std::uint32_t slot);
  void unlink(std::uint32_t slot);
  void free_slot(std::uint32_t slot);  // a slot whose edge is in no list becomes a hole
  // xor every cell of `tree` by x, recording the writes
  void xor_tree(const std::vector<std::uint32_t>& tree, std::uint64_t x, OthelloMessage& message);
  void record(std::uint32_t cell, OthelloMessage& message) const {
    if (config_.messages) message.writes.push_back({cell, cells_[cell].bits});
  }
  // New seed (and sizes for capacity_) until the graph of all keys is acyclic; returns the image message
  // (empty when messages are off).
  OthelloMessage rebuild();
  // append's work; nullopt when a cycle refused the key (OnCycle::refuse).
  enum class OnCycle { rebuild, refuse };
  std::optional<OthelloMessage> add(const Key& key, std::uint64_t value, OnCycle on_cycle);
  std::optional<OthelloMessage> cycle(std::uint32_t slot, OnCycle on_cycle);  // add's answer to a cycle
  // Fills every tree of the current graph; false on a cycle. value(slot) gives the stored value of the
  // key in that slot; each tree's root (and each free cell) gets root_value(cell), masked to payload_bits.
  // Each cell's bits go to store(cell, bits, root), the root of its tree first.
  template <class ValueOfSlot, class RootValue, class Store>
  bool fill(unsigned taken_bits, unsigned payload_bits, ValueOfSlot&& value, RootValue&& root_value, Store&& store) const;
  std::uint32_t next_at(std::uint32_t slot, std::uint32_t cell) const {
    return edges_[slot].a == cell ? edges_[slot].next_a : edges_[slot].next_b;
  }
  std::uint32_t other_end(std::uint32_t slot, std::uint32_t cell) const {
    return edges_[slot].a == cell ? edges_[slot].b : edges_[slot].a;
  }
  // The link in cell's edge list that points at `slot` (the list must hold it).
  std::uint32_t* link_to(std::uint32_t slot, std::uint32_t cell) {
    std::uint32_t* link = &cells_[cell].head;
    while (*link != slot) link = edges_[*link].a == cell ? &edges_[*link].next_a : &edges_[*link].next_b;
    return link;
  }

  OthelloConfig config_;
  std::uint32_t capacity_;
  OthelloShape shape_;
  std::size_t rebuilds_ = 0;
  Random rng_;

  std::vector<Key> keys_;
  std::vector<std::uint64_t> values_;
  std::vector<Edge> edges_;  // per slot
  std::vector<std::uint32_t> free_;  // the holes, the next one to fill last
  std::vector<Cell> cells_;  // the arrays A then B
  bool sets_split_ = false;  // a delete came since the last rebuild: a set may hold several trees
  mutable std::vector<std::uint32_t> walk_, walk_parent_;  // component()'s scratch
  std::unordered_map<Key, std::uint32_t, KeyHasher> slots_;  // empty unless config_.key_index
};

template <CompactKey Key>
template <class ValueOfSlot>
OthelloImage OthelloBuilder<Key>::refill(unsigned value_bits, ValueOfSlot&& value_of_slot, std::uint64_t fill_seed,
                                         const OthelloImage* previous) const {
  OthelloShape shape = shape_;
  shape.value_bits = value_bits;
  shape.fingerprint_bits = 0;
  Random rng(fill_seed);
  const bool keep = previous != nullptr && previous->shape == shape;
  OthelloImage image{shape, PackedCells(cells_.size(), shape.cell_bits())};
  fill(
      shape.taken_bits(), value_bits, value_of_slot,
      [&](std::uint32_t cell) { return keep ? previous->cells.get(cell) >> shape.taken_bits() : rng.next(); },
      [&](std::uint32_t cell, std::uint64_t bits, std::uint32_t) { image.cells.set(cell, bits); });
  return image;
}

template <CompactKey Key>
template <class ValueOfSlot, class RootValue, class Store>
bool OthelloBuilder<Key>::fill(unsigned taken_bits, unsigned payload_bits, ValueOfSlot&& value, RootValue&& root_value,
                               Store&& store) const {
  const std::uint64_t payload_mask = payload_bits >= 64 ? ~0ull : (1ull << payload_bits) - 1;
  // Per cell, the slot of the edge the walk came by: kUnvisited before the walk reaches the cell, kNone
  // at a root.
  constexpr std::uint32_t kUnvisited = kNone - 1;
  std::vector<std::uint32_t> arrived_by(cells_.size(), kUnvisited);
  struct Visit {
    std::uint32_t cell;
    std::uint64_t payload;
  };
  std::vector<Visit> stack;
  auto bits = [&](std::uint32_t cell, std::uint64_t payload) {
    return (payload << taken_bits) | (taken_bits != 0 && cells_[cell].head != kNone ? 1ull : 0ull);
  };
  for (std::uint32_t root = 0; root < cells_.size(); ++root) {
    if (arrived_by[root] != kUnvisited) continue;
    arrived_by[root] = kNone;
    const std::uint64_t root_payload = root_value(root) & payload_mask;
    store(root, bits(root, root_payload), root);
    stack.assign(1, {root, root_payload});
    while (!stack.empty()) {
      const Visit u = stack.back();
      stack.pop_back();
      for (std::uint32_t s = cells_[u.cell].head; s != kNone; s = next_at(s, u.cell)) {
        if (s == arrived_by[u.cell]) continue;
        const std::uint32_t v = other_end(s, u.cell);
        if (arrived_by[v] != kUnvisited) return false;  // a second path to v: a cycle
        arrived_by[v] = s;
        const std::uint64_t payload = (u.payload ^ value(s)) & payload_mask;
        store(v, bits(v, payload), root);
        stack.push_back({v, payload});
      }
    }
  }
  return true;
}

extern template class OthelloBuilder<std::uint64_t>;
extern template class OthelloBuilder<FlowKeyV4>;

}  // namespace flowtrack::compact
