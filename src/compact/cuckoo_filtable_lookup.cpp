#include "flowtrack/compact/cuckoo_filtable_lookup.hpp"

namespace flowtrack::compact {

template <CompactKey Key>
FiltableLookup<Key>::FiltableLookup(const FiltableImage<Key>& image)
    : shape_(image.shape), level1_(image.level1), level2_(image.level2) {}

template <CompactKey Key>
void FiltableLookup<Key>::apply(const FiltableMessage<Key>& message) {
  if (message.image) {
    const FiltableImage<Key>& image = *message.image;
    const bool same_geometry = image.shape.buckets == shape_.buckets && image.shape.level2_slots == shape_.level2_slots &&
                               image.shape.fingerprint_bits == shape_.fingerprint_bits &&
                               image.shape.value_bits == shape_.value_bits;
    if (!same_geometry) {
      // Another geometry: the caller guarantees no reader is inside (as for OthelloLookup).
      shape_ = image.shape;
      level1_ = image.level1;
      level2_ = image.level2;
      return;
    }
    VersionStripes::ExclusiveSection exclusive(stripes_);
    VersionStripes::ExclusiveSection exclusive2(level2_stripes_);
    store_relaxed(shape_.seed, image.shape.seed);
    level1_.assign_words(image.level1.words());
    for (std::size_t i = 0; i < level2_.size(); ++i) store_words_relaxed(level2_[i], image.level2[i]);
    return;
  }
  auto write_level2 = [&](const auto& writes) {
    if (writes.empty()) return;
    VersionStripes::WriteSection section(level2_stripes_, {0});
    for (const auto& w : writes) store_words_relaxed(level2_[w.position], w.entry);
  };
  write_level2(message.level2_inserts);
  if (!message.level1.empty()) {
    std::vector<std::uint32_t> stripes;
    for (const auto& w : message.level1) stripes.push_back(stripes_.stripe_of(w.position / kFiltableSlots));
    VersionStripes::WriteSection section(stripes_, std::move(stripes));
    for (const auto& w : message.level1) level1_.set(w.position, w.cell);
  }
  write_level2(message.level2_removals);
}

template <CompactKey Key>
std::optional<std::uint64_t> FiltableLookup<Key>::find_level2(const Key& key) const {
  for (;;) {
    const auto snap = level2_stripes_.stripes_begin(level2_stripes_.epoch_begin(), 0, 0);
    std::optional<std::uint64_t> found;
    const std::uint32_t mask = shape_.level2_slots - 1;
    for (std::uint32_t i = level2_home(shape_, key), probes = 0; probes <= mask; i = (i + 1) & mask, ++probes) {
      const Level2Entry<Key> e = load_words_relaxed(level2_[i]);
      if (e.used == 0) break;
      if (e.key == key) {
        found = e.value;
        break;
      }
    }
    if (level2_stripes_.read_valid(snap, 0, 0)) return found;
  }
}

template <CompactKey Key>
std::optional<std::uint64_t> FiltableLookup<Key>::find(const Key& key) const {
  const std::uint64_t fp_mask = (1ull << shape_.fingerprint_bits) - 1;
  for (;;) {
    const std::uint32_t epoch = stripes_.epoch_begin();
    const FiltableShape shape = current_shape();
    const FiltableProbe p = filtable_probe(shape, key);
    const std::uint32_t s0 = stripes_.stripe_of(p.bucket[0]), s1 = stripes_.stripe_of(p.bucket[1]);
    const auto snap = stripes_.stripes_begin(epoch, s0, s1);
    std::optional<std::uint64_t> found;
    for (const std::uint32_t b : p.bucket) {
      for (std::size_t s = 0; s < kFiltableSlots && !found; ++s) {
        const std::uint64_t cell = level1_.get(b * kFiltableSlots + s);
        if ((cell & fp_mask) == p.fingerprint) found = cell >> shape.fingerprint_bits;
      }
    }
    if (!found) {
      // Level 2 is read while level 1's stripes are still held by this snapshot: a key moving between
      // the levels is written to its new level before it leaves the old one, so if the level-2 read saw
      // it leave, the level-1 write came first and the validation below fails.
      found = find_level2(key);
    }
    if (stripes_.read_valid(snap, s0, s1)) return found;
  }
}

template <CompactKey Key>
void FiltableLookup<Key>::find_bulk(std::span<const Key> keys, std::span<std::optional<std::uint64_t>> out) const {
  constexpr std::size_t kChunk = 32;
  for (std::size_t base = 0; base < keys.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, keys.size() - base);
    const FiltableShape shape = current_shape();
    for (std::size_t i = 0; i < n; ++i) {
      const FiltableProbe p = filtable_probe(shape, keys[base + i]);
      __builtin_prefetch(level1_.address_of(p.bucket[0] * kFiltableSlots));
      __builtin_prefetch(level1_.address_of(p.bucket[1] * kFiltableSlots));
    }
    for (std::size_t i = 0; i < n; ++i) out[base + i] = find(keys[base + i]);
  }
}

template <CompactKey Key>
std::size_t FiltableLookup<Key>::bytes() const {
  return array_bytes() + stripes_.bytes() + level2_stripes_.bytes() + sizeof(*this);
}

template class FiltableLookup<std::uint64_t>;
template class FiltableLookup<FlowKeyV4>;

}  // namespace flowtrack::compact
