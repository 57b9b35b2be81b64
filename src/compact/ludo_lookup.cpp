#include "flowtrack/compact/ludo_lookup.hpp"

namespace flowtrack::compact {
namespace {

template <CompactKey Key>
bool same_geometry(const LudoImage<Key>& a, const LudoShape& shape, const OthelloShape& locator,
                   std::size_t overflow_size) {
  return a.shape.buckets == shape.buckets && a.shape.value_bits == shape.value_bits &&
         a.shape.seed_bits == shape.seed_bits && a.overflow.size() == overflow_size &&
         a.locator.shape.same_geometry(locator);
}

std::size_t count_used(const auto& fallback) {
  std::size_t used = 0;
  for (const auto& e : fallback) used += e.used != 0;
  return used;
}

}  // namespace

template <CompactKey Key>
std::size_t LudoMessage<Key>::bytes() const {
  if (image) return image->seeds.bytes() + image->slots.bytes() + image->locator.cells.bytes() +
                     image->overflow.size() * sizeof(LudoOverflowEntry);
  std::size_t total = locator.bytes() + overflow.size() * (4 + sizeof(LudoOverflowEntry)) + fallback.size() * (sizeof(Key) + 8);
  total += buckets.size() * (5 + kLudoSlots * 4);  // bucket id, seed, four slots of up to 32 bits
  return total;
}

template <CompactKey Key>
LudoLookup<Key>::LudoLookup(const LudoImage<Key>& image)
    : shape_(image.shape), locator_(std::make_unique<OthelloLookup>(image.locator)), seeds_(image.seeds), slots_(image.slots), overflow_(image.overflow),
      fallback_(image.fallback), fallback_used_(static_cast<std::uint32_t>(count_used(image.fallback))) {}

template <CompactKey Key>
void LudoLookup<Key>::apply(const LudoMessage<Key>& message) {
  if (message.image) {
    const LudoImage<Key>& image = *message.image;
    if (!same_geometry(image, shape_, locator_->shape(), overflow_.size())) {
      // Another geometry: the caller guarantees no reader is inside (see the header).
      shape_ = image.shape;
      locator_ = std::make_unique<OthelloLookup>(image.locator);
      seeds_ = image.seeds;
      slots_ = image.slots;
      overflow_ = image.overflow;
      fallback_ = image.fallback;
      fallback_used_ = static_cast<std::uint32_t>(count_used(fallback_));
      return;
    }
    VersionStripes::ExclusiveSection exclusive(stripes_);
    VersionStripes::ExclusiveSection exclusive_fallback(fallback_stripes_);
    OthelloMessage locator;
    locator.image = std::make_shared<const OthelloImage>(image.locator);
    locator_->apply(locator);
    store_relaxed(shape_.bucket_seed, image.shape.bucket_seed);
    seeds_.assign_words(image.seeds.words());
    slots_.assign_words(image.slots.words());
    for (std::size_t i = 0; i < overflow_.size(); ++i) store_relaxed(overflow_[i], image.overflow[i]);
    for (std::size_t i = 0; i < kLudoFallbackSlots; ++i) store_words_relaxed(fallback_[i], image.fallback[i]);
    store_relaxed(fallback_used_, static_cast<std::uint32_t>(count_used(image.fallback)));
    return;
  }
  if (!message.fallback.empty()) {
    VersionStripes::WriteSection section(fallback_stripes_, {0});
    for (const auto& [index, entry] : message.fallback) store_words_relaxed(fallback_[index], entry);
    store_relaxed(fallback_used_, static_cast<std::uint32_t>(count_used(fallback_)));
  }
  std::vector<std::uint32_t> stripes;
  for (const auto& b : message.buckets) stripes.push_back(stripes_.stripe_of(b.bucket));
  for (const auto& o : message.overflow) stripes.push_back(stripes_.stripe_of(o.bucket));
  if (stripes.empty() && message.locator.empty()) return;
  VersionStripes::WriteSection section(stripes_, std::move(stripes));
  locator_->apply(message.locator);
  for (const auto& o : message.overflow) store_relaxed(overflow_[o.position], o.entry);
  for (const auto& b : message.buckets) {
    seeds_.set(b.bucket, std::min(b.seed, shape_.overflow_marker()));
    for (std::size_t s = 0; s < kLudoSlots; ++s) slots_.set(b.bucket * kLudoSlots + s, b.slots[s]);
  }
}

template <CompactKey Key>
std::optional<std::uint64_t> LudoLookup<Key>::fallback_value(const Key& key) const {
  for (;;) {
    const auto snap = fallback_stripes_.stripes_begin(fallback_stripes_.epoch_begin(), 0, 0);
    std::optional<std::uint64_t> found;
    for (const auto& slot : fallback_) {
      const FallbackEntry<Key> e = load_words_relaxed(slot);
      if (e.used != 0 && e.key == key) found = e.value;
    }
    if (fallback_stripes_.read_valid(snap, 0, 0)) return found;
  }
}

template <CompactKey Key>
std::uint32_t LudoLookup<Key>::seed_of(std::uint32_t bucket) const {
  const auto seed = static_cast<std::uint32_t>(seeds_.get(bucket));
  if (seed != shape_.overflow_marker()) return seed;
  const auto overflow_buckets = static_cast<std::uint32_t>(overflow_.size() / kLudoSlots);
  const std::uint64_t h = seeded_hash(std::uint64_t{bucket}, load_relaxed(shape_.bucket_seed));
  for (const std::uint32_t ob : {reduce(low_half(h), overflow_buckets), reduce(high_half(h), overflow_buckets)}) {
    for (std::size_t s = 0; s < kLudoSlots; ++s) {
      const LudoOverflowEntry entry = load_relaxed(overflow_[ob * kLudoSlots + s]);
      if (entry != 0 && overflow_bucket(entry) == bucket) return static_cast<std::uint32_t>(entry & 0xff);
    }
  }
  return 0;  // only while a write is under way: the reader's validation fails
}

template <CompactKey Key>
bool LudoLookup<Key>::try_read(const Key& key, std::uint32_t epoch, std::uint64_t& value) const {
  const auto buckets = ludo_buckets(shape_, seeded_hash(key, load_relaxed(shape_.bucket_seed)));
  const std::uint32_t s0 = stripes_.stripe_of(buckets[0]), s1 = stripes_.stripe_of(buckets[1]);
  const auto snap = stripes_.stripes_begin(epoch, s0, s1);
  const std::uint32_t bucket = buckets[locator_->lookup(key) & 1];
  value = slots_.get(bucket * kLudoSlots + ludo_slot(key, seed_of(bucket)));
  return stripes_.read_valid(snap, s0, s1);
}

template <CompactKey Key>
std::uint64_t LudoLookup<Key>::lookup(const Key& key) const {
  if (load_relaxed(fallback_used_) != 0) {
    if (const auto v = fallback_value(key)) return *v;
  }
  std::uint64_t value;
  while (!try_read(key, stripes_.epoch_begin(), value)) {
  }
  return value;
}

template <CompactKey Key>
void LudoLookup<Key>::lookup_bulk(std::span<const Key> keys, std::span<std::uint64_t> out) const {
  constexpr std::size_t kChunk = 32;
  for (std::size_t base = 0; base < keys.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, keys.size() - base);
    const std::uint64_t bucket_seed = load_relaxed(shape_.bucket_seed);
    for (std::size_t i = 0; i < n; ++i) {
      const Key& key = keys[base + i];
      locator_->prefetch(key);
      for (const std::uint32_t b : ludo_buckets(shape_, seeded_hash(key, bucket_seed))) {
        __builtin_prefetch(slots_.address_of(b * kLudoSlots));
        __builtin_prefetch(seeds_.address_of(b));
      }
    }
    for (std::size_t i = 0; i < n; ++i) out[base + i] = lookup(keys[base + i]);
  }
}

template <CompactKey Key>
LudoImage<Key> LudoLookup<Key>::image() const {
  return {shape_, locator_->image(), seeds_, slots_, overflow_, fallback_};
}

template <CompactKey Key>
std::size_t LudoLookup<Key>::array_bytes() const {
  return locator_->array_bytes() + seeds_.bytes() + slots_.bytes() + overflow_.size() * sizeof(LudoOverflowEntry) +
         (fallback_used_ != 0 ? sizeof(fallback_) : 0);
}

template <CompactKey Key>
std::size_t LudoLookup<Key>::bytes() const {
  return locator_->bytes() + seeds_.bytes() + slots_.bytes() + overflow_.size() * sizeof(LudoOverflowEntry) +
         sizeof(fallback_) + stripes_.bytes() + fallback_stripes_.bytes();
}

template struct LudoMessage<std::uint64_t>;
template struct LudoMessage<FlowKeyV4>;
template class LudoLookup<std::uint64_t>;
template class LudoLookup<FlowKeyV4>;

}  // namespace flowtrack::compact
