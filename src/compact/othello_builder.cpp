#include "flowtrack/compact/othello_builder.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "flowtrack/util/assert.hpp"

namespace flowtrack::compact {
namespace {

constexpr unsigned kMaxRehash = 50;  // seeds tried at one size before the arrays grow

// |A| = 1.33 n, |B| = n: the expected number of rehashes stays below 1.51 (§2.3 of the thesis).
OthelloShape sized_shape(const OthelloConfig& c, std::uint32_t capacity, std::uint64_t seed) {
  OthelloShape s;
  s.seed = seed;
  s.size_b = std::max<std::uint32_t>(8, capacity);
  s.size_a = std::max<std::uint32_t>(8, static_cast<std::uint32_t>(std::ceil(capacity * 1.3334)));
  s.value_bits = c.value_bits;
  s.fingerprint_bits = c.fingerprint_bits;
  s.emptiness = c.emptiness;
  return s;
}

}  // namespace

template <CompactKey Key>
OthelloBuilder<Key>::OthelloBuilder(const OthelloConfig& config)
    : config_(config), capacity_(std::max<std::uint32_t>(1, config.capacity)),
      shape_(sized_shape(config, capacity_, config.seed)), rng_(config.seed * 0x9e3779b97f4a7c15ull + 1) {
  rebuild();
  rebuilds_ = 0;
}

template <CompactKey Key>
std::uint64_t OthelloBuilder<Key>::stored_value(std::uint32_t slot) const {
  if (shape_.fingerprint_bits == 0) return values_[slot];
  return values_[slot] | (othello_probe(shape_, keys_[slot]).fingerprint << shape_.value_bits);
}

template <CompactKey Key>
void OthelloBuilder<Key>::set_payload(std::uint32_t cell, std::uint64_t payload) {
  const unsigned t = shape_.taken_bits();
  cells_[cell].bits = (payload << t) | (cells_[cell].bits & ((1ull << t) - 1));
}

template <CompactKey Key>
void OthelloBuilder<Key>::set_taken(std::uint32_t cell, bool taken) {
  if (shape_.emptiness) cells_[cell].bits = (cells_[cell].bits & ~1ull) | (taken ? 1 : 0);
}

template <CompactKey Key>
const std::vector<std::uint32_t>& OthelloBuilder<Key>::component(std::uint32_t cell, std::uint32_t skip_slot) const {
  walk_.assign(1, cell);
  walk_parent_.assign(1, kNone);  // the slot we arrived by, parallel to walk_
  for (std::size_t i = 0; i < walk_.size(); ++i) {
    const std::uint32_t u = walk_[i];
    for (std::uint32_t s = cells_[u].head; s != kNone; s = next_at(s, u)) {
      if (s == skip_slot || s == walk_parent_[i]) continue;
      walk_.push_back(other_end(s, u));
      walk_parent_.push_back(s);
    }
  }
  return walk_;
}

template <CompactKey Key>
std::uint32_t OthelloBuilder<Key>::root_of(std::uint32_t cell) {
  for (;;) {
    const std::uint32_t parent = cells_[cell].set;
    if ((parent & kSetRoot) != 0) return cell;
    const std::uint32_t grandparent = cells_[parent].set;
    if ((grandparent & kSetRoot) != 0) return parent;
    cells_[cell].set = grandparent;  // path halving
    cell = grandparent;
  }
}

template <CompactKey Key>
void OthelloBuilder<Key>::join(std::uint32_t a, std::uint32_t b) {
  a = root_of(a);
  b = root_of(b);
  if (a == b) return;
  if (set_size(a) < set_size(b)) std::swap(a, b);
  cells_[a].set = kSetRoot | (set_size(a) + set_size(b));
  cells_[b].set = a;
}

template <CompactKey Key>
void OthelloBuilder<Key>::link(std::uint32_t slot) {
  Edge& edge = edges_[slot];
  edge.next_a = std::exchange(cells_[edge.a].head, slot);
  edge.next_b = std::exchange(cells_[edge.b].head, slot);
}

template <CompactKey Key>
void OthelloBuilder<Key>::unlink(std::uint32_t slot) {
  for (const std::uint32_t cell : {edges_[slot].a, edges_[slot].b}) *link_to(slot, cell) = next_at(slot, cell);
}

template <CompactKey Key>
void OthelloBuilder<Key>::xor_tree(const std::vector<std::uint32_t>& tree, std::uint64_t x, OthelloMessage& message) {
  if (x == 0) return;
  for (const std::uint32_t cell : tree) {
    set_payload(cell, payload(cell) ^ x);
    record(cell, message);
  }
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::insert(const Key& key, std::uint64_t value) {
  FLOWTRACK_ASSERT(config_.key_index, "updates by key need the key index");
  if (const auto found = slots_.find(key); found != slots_.end()) return set_value(found->second, value);
  return append(key, value);
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::set_value(std::uint32_t slot, std::uint64_t value) {
  // A value change: xor the tree on B's side of the key's edge, so A[a] ^ B[b] moves by old ^ new.
  value &= (1ull << shape_.value_bits) - 1;
  OthelloMessage message;
  const std::uint64_t x = values_[slot] ^ value;
  values_[slot] = value;
  xor_tree(component(edges_[slot].b, slot), x, message);
  return message;
}

template <CompactKey Key>
bool OthelloBuilder<Key>::restate(OthelloImage& image, std::uint32_t slot, std::uint64_t value) const {
  OthelloShape shape = shape_;
  shape.value_bits = image.shape.value_bits;
  shape.fingerprint_bits = 0;
  if (!(image.shape == shape) || slot >= slots() || !live(slot)) return false;
  const unsigned taken = shape.taken_bits();
  const std::uint64_t mask = (1ull << shape.value_bits) - 1;
  const Edge& edge = edges_[slot];
  const std::uint64_t x = (((image.cells.get(edge.a) ^ image.cells.get(edge.b)) >> taken) ^ value) & mask;
  if (x == 0) return true;
  for (const std::uint32_t cell : component(edge.b, slot)) image.cells.set(cell, image.cells.get(cell) ^ (x << taken));
  return true;
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::append(const Key& key, std::uint64_t value) {
  return *add(key, value, OnCycle::rebuild);
}

template <CompactKey Key>
bool OthelloBuilder<Key>::append_unless_cycle(const Key& key, std::uint64_t value) {
  return add(key, value, OnCycle::refuse).has_value();
}

template <CompactKey Key>
std::optional<OthelloMessage> OthelloBuilder<Key>::add(const Key& key, std::uint64_t value, OnCycle on_cycle) {
  value &= (1ull << shape_.value_bits) - 1;
  OthelloMessage message;
  const std::uint32_t slot = next_slot();
  const OthelloProbe p = othello_probe(shape_, key);
  const Edge edge{p.a, p.b, kNone, kNone};
  if (slot == slots()) {
    keys_.push_back(key);
    values_.push_back(value);
    edges_.push_back(edge);
  } else {
    free_.pop_back();
    keys_[slot] = key;
    values_[slot] = value;
    edges_[slot] = edge;
  }
  if (config_.key_index) slots_.emplace(key, slot);
  if (size() > capacity_) {
    capacity_ *= 2;
    return rebuild();
  }
  // Fix one of the two trees so that A[a] ^ B[b] becomes the key's stored value (none when it is
  // already: an owner choosing the value the cells give, OthelloMap, walks no tree).
  const std::uint64_t x = payload(p.a) ^ payload(p.b) ^ stored_value(slot);
  const std::uint32_t root_a = root_of(p.a), root_b = root_of(p.b);
  if (root_a != root_b) {
    // Two trees (a set holds whole trees, even after a delete split one): the smaller by its set's size.
    if (x != 0) xor_tree(component(set_size(root_a) < set_size(root_b) ? p.a : p.b, kNone), x, message);
  } else {
    // One tree, or after a delete perhaps two that union-find still joins: a walk decides, and its tree
    // is the one fixed.
    if (!sets_split_) return cycle(slot, on_cycle);
    const std::vector<std::uint32_t>& tree_a = component(p.a, kNone);
    if (std::find(tree_a.begin(), tree_a.end(), p.b) != tree_a.end()) return cycle(slot, on_cycle);
    xor_tree(tree_a, x, message);
  }
  join(root_a, root_b);
  link(slot);
  for (const std::uint32_t cell : {p.a, p.b}) {
    if (shape_.emptiness && (cells_[cell].bits & 1) == 0) {
      set_taken(cell, true);
      record(cell, message);
    }
  }
  return message;
}

template <CompactKey Key>
std::optional<OthelloMessage> OthelloBuilder<Key>::cycle(std::uint32_t slot, OnCycle on_cycle) {
  if (on_cycle == OnCycle::rebuild) return rebuild();
  free_slot(slot);  // refused: the slot taken for the key, whose edge is in no list yet
  return std::nullopt;
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::erase(const Key& key) {
  FLOWTRACK_ASSERT(config_.key_index, "updates by key need the key index");
  const auto found = slots_.find(key);
  if (found == slots_.end()) return {};
  return erase_slot(found->second);
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::erase_slot(std::uint32_t slot) {
  OthelloMessage message;
  unlink(slot);
  sets_split_ = true;
  for (const std::uint32_t cell : {edges_[slot].a, edges_[slot].b}) {
    if (shape_.emptiness && cells_[cell].head == kNone) {
      set_taken(cell, false);
      record(cell, message);
    }
  }
  free_slot(slot);
  return message;
}

template <CompactKey Key>
void OthelloBuilder<Key>::free_slot(std::uint32_t slot) {
  if (config_.key_index) slots_.erase(keys_[slot]);
  edges_[slot].a = kHole;
  free_.push_back(slot);
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::assign(std::span<const Key> keys, std::span<const std::uint64_t> values) {
  keys_.assign(keys.begin(), keys.end());
  values_.resize(keys.size());
  edges_.assign(keys.size(), Edge{});  // no hole
  free_.clear();
  slots_.clear();
  for (std::uint32_t s = 0; s < keys.size(); ++s) {
    values_[s] = values[s] & ((1ull << shape_.value_bits) - 1);
    if (config_.key_index) slots_.emplace(keys_[s], s);
  }
  while (keys_.size() > capacity_) capacity_ *= 2;
  return rebuild();
}

template <CompactKey Key>
std::optional<std::uint64_t> OthelloBuilder<Key>::value_of(const Key& key) const {
  const auto slot = slot_of(key);
  if (!slot) return std::nullopt;
  return values_[*slot];
}

template <CompactKey Key>
std::optional<std::uint32_t> OthelloBuilder<Key>::slot_of(const Key& key) const {
  FLOWTRACK_ASSERT(config_.key_index, "finding a key's slot needs the key index");
  const auto found = slots_.find(key);
  if (found == slots_.end()) return std::nullopt;
  return found->second;
}

template <CompactKey Key>
OthelloImage OthelloBuilder<Key>::export_image() const {
  OthelloImage image{shape_, PackedCells(cells_.size(), shape_.cell_bits())};
  for (std::size_t c = 0; c < cells_.size(); ++c) image.cells.set(c, cells_[c].bits);
  return image;
}

template <CompactKey Key>
bool OthelloBuilder<Key>::acyclic() const {
  return fill(0, 1, [](std::uint32_t) { return 0; }, [](std::uint32_t) { return 0; }, [](std::uint32_t, std::uint64_t, std::uint32_t) {});
}

template <CompactKey Key>
OthelloMessage OthelloBuilder<Key>::rebuild() {
  ++rebuilds_;
  for (unsigned attempt = 0;; ++attempt) {
    if (attempt == kMaxRehash) {
      capacity_ *= 2;
      attempt = 0;
    }
    shape_ = sized_shape(config_, capacity_, rng_.next());
    const std::size_t cells = std::size_t{shape_.size_a} + shape_.size_b;
    cells_.assign(cells, Cell{});
    for (std::uint32_t s = 0; s < slots(); ++s) {
      if (!live(s)) continue;
      const OthelloProbe p = othello_probe(shape_, keys_[s]);
      edges_[s].a = p.a;
      edges_[s].b = p.b;
      link(s);
    }
    const unsigned payload_bits = shape_.value_bits + shape_.fingerprint_bits;
    const auto root_value = [&](std::uint32_t) { return config_.random_fill ? rng_.next() : 0; };
    // The walk visits each tree from its root: the union-find sets come out flat, each cell's parent
    // its tree's root (and the root counting the tree's cells).
    const auto store = [&](std::uint32_t cell, std::uint64_t bits, std::uint32_t root) {
      cells_[cell].bits = bits;
      if (cell != root) {
        cells_[cell].set = root;
        ++cells_[root].set;
      }
    };
    if (fill(shape_.taken_bits(), payload_bits, [this](std::uint32_t s) { return stored_value(s); }, root_value, store)) break;
  }
  sets_split_ = false;
  OthelloMessage message;
  if (config_.messages) message.image = std::make_shared<const OthelloImage>(export_image());
  return message;
}

template class OthelloBuilder<std::uint64_t>;
template class OthelloBuilder<FlowKeyV4>;

}  // namespace flowtrack::compact
