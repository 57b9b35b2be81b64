#include "flowtrack/compact/ludo_builder.hpp"

#include <algorithm>
#include <cmath>

#include "flowtrack/table/internal/cuckoo_path.hpp"

namespace flowtrack::compact {
namespace {

constexpr std::uint32_t kMaxSeed = 256;  // seeds the control plane tries (the overflow table holds 8 bits)

std::uint32_t ludo_buckets_for(std::uint32_t capacity, double max_load) {
  return std::max<std::uint32_t>(2, static_cast<std::uint32_t>(std::ceil(capacity / (kLudoSlots * max_load))));
}

std::array<std::uint32_t, 2> overflow_candidates(std::uint32_t bucket, std::uint64_t bucket_seed, std::size_t slots) {
  const auto overflow_buckets = static_cast<std::uint32_t>(slots / kLudoSlots);
  const std::uint64_t h = seeded_hash(std::uint64_t{bucket}, bucket_seed);
  return {reduce(low_half(h), overflow_buckets), reduce(high_half(h), overflow_buckets)};
}

// Appends `more` to `into`; an image in either is resolved by the caller (finish_locator).
void append(OthelloMessage& into, OthelloMessage&& more, bool& rebuilt) {
  if (more.image) rebuilt = true;
  into.writes.insert(into.writes.end(), more.writes.begin(), more.writes.end());
}

}  // namespace

template <CompactKey Key>
LudoBuilder<Key>::LudoBuilder(const LudoConfig& config)
    : config_(config), rng_(config.seed ^ 0x7c3a5d1e9b2f4e61ull), capacity_(std::max<std::uint32_t>(8, config.capacity)) {
  rebuild(capacity_, std::nullopt);
  rebuilds_ = 0;
}

template <CompactKey Key>
std::array<std::uint32_t, 2> LudoBuilder<Key>::candidates(const Key& key) const {
  return ludo_buckets(shape_, seeded_hash(key, shape_.bucket_seed));
}

template <CompactKey Key>
std::optional<std::uint32_t> LudoBuilder<Key>::position_of(const Key& key) const {
  for (const std::uint32_t b : candidates(key)) {
    for (std::uint32_t s = 0; s < kLudoSlots; ++s) {
      const std::uint32_t p = b * kLudoSlots + s;
      if (used_[p] && keys_[p] == key) return p;
    }
  }
  return std::nullopt;
}

template <CompactKey Key>
std::optional<std::uint64_t> LudoBuilder<Key>::value_of(const Key& key) const {
  if (const auto p = position_of(key)) return values_[*p];
  for (const auto& e : fallback_) {
    if (e.used && e.key == key) return e.value;
  }
  return std::nullopt;
}

template <CompactKey Key>
bool LudoBuilder<Key>::place(const Item& item, std::vector<std::uint32_t>& touched, LudoMessage<Key>* message) {
  const auto buckets = candidates(item.key);
  auto free_slot = [&](std::uint32_t bucket) {
    for (std::uint32_t s = 0; s < kLudoSlots; ++s) {
      if (!used_[bucket * kLudoSlots + s]) return CuckooSlot{bucket, s};
    }
    return CuckooSlot{};
  };
  CuckooSlot hole = free_slot(buckets[0]);
  if (!hole.valid()) hole = free_slot(buckets[1]);
  bool locator_rebuilt = false;
  if (!hole.valid() && config_.displace) {
    auto alternate_of = [&](std::uint32_t bucket, std::uint32_t slot) {
      const auto c = candidates(keys_[bucket * kLudoSlots + slot]);
      return c[0] == bucket ? c[1] : c[0];
    };
    // Each move copies a key into the hole of its other bucket: its locator bit flips.
    auto move = [&](CuckooSlot from, CuckooSlot to) {
      const std::uint32_t src = from.bucket * kLudoSlots + from.slot, dst = to.bucket * kLudoSlots + to.slot;
      keys_[dst] = keys_[src];
      values_[dst] = values_[src];
      used_[dst] = 1;
      used_[src] = 0;
      touched.push_back(from.bucket);
      touched.push_back(to.bucket);
      ++moves_;
      if (message != nullptr) append(message->locator, locator_->insert(keys_[dst], choice_of(keys_[dst], to.bucket)), locator_rebuilt);
    };
    hole = make_room<kLudoSlots>(buckets[0], buckets[1], free_slot, alternate_of, move);
  }
  if (!hole.valid()) return false;
  const std::uint32_t p = hole.bucket * kLudoSlots + hole.slot;
  keys_[p] = item.key;
  values_[p] = item.value;
  used_[p] = 1;
  touched.push_back(hole.bucket);
  if (message != nullptr) {
    append(message->locator, locator_->insert(item.key, choice_of(item.key, hole.bucket)), locator_rebuilt);
    finish_locator(*message, locator_rebuilt);
  }
  return true;
}

// A locator rebuild (a cycle in its graph) sends a whole locator image: it supersedes the cell writes.
template <CompactKey Key>
void LudoBuilder<Key>::finish_locator(LudoMessage<Key>& message, bool locator_rebuilt) {
  if (!locator_rebuilt) return;
  message.locator.writes.clear();
  message.locator.image = std::make_shared<const OthelloImage>(locator_->export_image());
}

template <CompactKey Key>
std::optional<std::uint32_t> LudoBuilder<Key>::find_seed(std::uint32_t bucket) const {
  for (std::uint32_t seed = 0; seed < kMaxSeed; ++seed) {
    unsigned taken = 0;
    bool distinct = true;
    for (std::uint32_t s = 0; s < kLudoSlots && distinct; ++s) {
      const std::uint32_t p = bucket * kLudoSlots + s;
      if (!used_[p]) continue;
      const unsigned bit = 1u << ludo_slot(keys_[p], seed);
      distinct = (taken & bit) == 0;
      taken |= bit;
    }
    if (distinct) return seed;
  }
  return std::nullopt;
}

template <CompactKey Key>
LudoBucketWrite LudoBuilder<Key>::bucket_write(std::uint32_t bucket) const {
  LudoBucketWrite w{bucket, seeds_[bucket], {}};
  for (std::uint32_t s = 0; s < kLudoSlots; ++s) {
    const std::uint32_t p = bucket * kLudoSlots + s;
    if (used_[p]) w.slots[ludo_slot(keys_[p], seeds_[bucket])] = values_[p];
  }
  return w;
}

template <CompactKey Key>
bool LudoBuilder<Key>::set_overflow(std::uint32_t bucket, std::optional<std::uint32_t> seed, LudoMessage<Key>* message) {
  const auto record = [&](std::uint32_t position, std::uint32_t owner) {
    if (message != nullptr) message->overflow.push_back({.entry = overflow_[position], .position = position, .bucket = owner});
  };
  const auto cands = overflow_candidates(bucket, shape_.bucket_seed, overflow_.size());
  for (const std::uint32_t ob : cands) {
    for (std::uint32_t s = 0; s < kLudoSlots; ++s) {
      const std::uint32_t p = ob * kLudoSlots + s;
      if (overflow_[p] != 0 && overflow_bucket(overflow_[p]) == bucket) {
        overflow_[p] = seed ? overflow_entry(bucket, *seed) : 0;
        record(p, bucket);
        return true;
      }
    }
  }
  if (!seed) return true;
  auto free_slot = [&](std::uint32_t ob) {
    for (std::uint32_t s = 0; s < kLudoSlots; ++s) {
      if (overflow_[ob * kLudoSlots + s] == 0) return CuckooSlot{ob, s};
    }
    return CuckooSlot{};
  };
  auto alternate_of = [&](std::uint32_t ob, std::uint32_t s) {
    const auto c = overflow_candidates(overflow_bucket(overflow_[ob * kLudoSlots + s]), shape_.bucket_seed, overflow_.size());
    return c[0] == ob ? c[1] : c[0];
  };
  auto move = [&](CuckooSlot from, CuckooSlot to) {
    const std::uint32_t src = from.bucket * kLudoSlots + from.slot, dst = to.bucket * kLudoSlots + to.slot;
    overflow_[dst] = overflow_[src];
    record(dst, overflow_bucket(overflow_[dst]));
    overflow_[src] = 0;
    record(src, overflow_bucket(overflow_[dst]));
  };
  CuckooSlot hole = free_slot(cands[0]);
  if (!hole.valid()) hole = free_slot(cands[1]);
  if (!hole.valid()) hole = make_room<kLudoSlots>(cands[0], cands[1], free_slot, alternate_of, move);
  if (!hole.valid()) return false;
  const std::uint32_t p = hole.bucket * kLudoSlots + hole.slot;
  overflow_[p] = overflow_entry(bucket, *seed);
  record(p, bucket);
  return true;
}

template <CompactKey Key>
bool LudoBuilder<Key>::reseed(std::uint32_t bucket, LudoMessage<Key>* message) {
  const auto seed = find_seed(bucket);
  if (!seed) return false;
  seeds_[bucket] = static_cast<std::uint8_t>(*seed);
  const bool overflows = *seed >= shape_.overflow_marker();
  if (!set_overflow(bucket, overflows ? seed : std::nullopt, message)) return false;
  if (message != nullptr) message->buckets.push_back(bucket_write(bucket));
  return true;
}

template <CompactKey Key>
LudoMessage<Key> LudoBuilder<Key>::insert(const Key& key, std::uint64_t value) {
  value &= (1ull << config_.value_bits) - 1;
  LudoMessage<Key> message;
  if (const auto p = position_of(key)) {
    values_[*p] = value;
    message.buckets.push_back(bucket_write(*p / kLudoSlots));
    return message;
  }
  for (std::uint32_t i = 0; i < kLudoFallbackSlots; ++i) {
    if (fallback_[i].used && fallback_[i].key == key) {
      fallback_[i].value = value;
      message.fallback.push_back({i, fallback_[i]});
      return message;
    }
  }
  const Item item{key, value};
  if (static_cast<double>(size_ + 1) > config_.max_load * shape_.buckets * kLudoSlots) {
    return rebuild(capacity_ * 2, item);
  }
  std::vector<std::uint32_t> touched;
  if (!place(item, touched, &message)) {
    const auto free = std::find_if(fallback_.begin(), fallback_.end(), [](const auto& e) { return !e.used; });
    if (free == fallback_.end()) return rebuild(capacity_ * 2, item);
    *free = {key, value, 1};
    message.fallback.push_back({static_cast<std::uint32_t>(free - fallback_.begin()), *free});
    ++size_;
    return message;
  }
  ++size_;
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (const std::uint32_t b : touched) {
    if (!reseed(b, &message)) return rebuild(capacity_, std::nullopt);
  }
  return message;
}

template <CompactKey Key>
LudoMessage<Key> LudoBuilder<Key>::erase(const Key& key) {
  LudoMessage<Key> message;
  if (const auto p = position_of(key)) {
    used_[*p] = 0;
    values_[*p] = 0;
    --size_;
    bool rebuilt = false;
    append(message.locator, locator_->erase(key), rebuilt);
    message.buckets.push_back(bucket_write(*p / kLudoSlots));
  } else {
    const auto it = std::find_if(fallback_.begin(), fallback_.end(), [&](const auto& e) { return e.used && e.key == key; });
    if (it == fallback_.end()) return message;
    *it = {};
    --size_;
    message.fallback.push_back({static_cast<std::uint32_t>(it - fallback_.begin()), *it});
  }
  if (capacity_ > std::max<std::uint32_t>(8, config_.capacity) &&
      static_cast<double>(size_) < config_.min_load * shape_.buckets * kLudoSlots) {
    return rebuild(capacity_ / 2, std::nullopt);
  }
  return message;
}

template <CompactKey Key>
LudoMessage<Key> LudoBuilder<Key>::rebuild(std::uint32_t capacity, std::optional<Item> extra) {
  ++rebuilds_;
  std::vector<Item> items;
  items.reserve(size_ + 1);
  for (std::size_t p = 0; p < used_.size(); ++p) {
    if (used_[p]) items.push_back({keys_[p], values_[p]});
  }
  for (const auto& e : fallback_) {
    if (e.used) items.push_back({e.key, e.value});
  }
  if (extra) items.push_back(*extra);
  capacity_ = std::max<std::uint32_t>(capacity, static_cast<std::uint32_t>(items.size()));
  for (;;) {
    shape_ = {rng_.next(), ludo_buckets_for(capacity_, config_.max_load), config_.value_bits, config_.seed_bits};
    const std::size_t slots = std::size_t{shape_.buckets} * kLudoSlots;
    keys_.assign(slots, Key{});
    values_.assign(slots, 0);
    used_.assign(slots, 0);
    seeds_.assign(shape_.buckets, 0);
    fallback_ = {};
    std::vector<std::uint32_t> touched;
    std::size_t parked = 0;
    for (const Item& item : items) {
      if (!place(item, touched, nullptr)) {
        if (parked == kLudoFallbackSlots) break;
        fallback_[parked++] = {item.key, item.value, 1};
      }
    }
    if (parked == kLudoFallbackSlots) {
      capacity_ += capacity_ / 8;
      continue;
    }
    bool seeded = true;
    std::size_t overflowing = 0;
    for (std::uint32_t b = 0; b < shape_.buckets && seeded; ++b) {
      const auto seed = find_seed(b);
      seeded = seed.has_value();
      if (seeded) {
        seeds_[b] = static_cast<std::uint8_t>(*seed);
        overflowing += *seed >= shape_.overflow_marker();
      }
    }
    if (!seeded) continue;
    // Room for 1.5x today's overflowing buckets (plus a margin) in the overflow cuckoo table.
    std::size_t overflow_slots = (overflowing * 3 / 2 + 16 + kLudoSlots - 1) / kLudoSlots * kLudoSlots;
    bool stored = false;
    while (!stored) {
      overflow_.assign(overflow_slots, 0);
      stored = true;
      for (std::uint32_t b = 0; b < shape_.buckets && stored; ++b) {
        if (seeds_[b] >= shape_.overflow_marker()) stored = set_overflow(b, seeds_[b], nullptr);
      }
      overflow_slots *= 2;
    }
    std::vector<Key> keys;
    std::vector<std::uint64_t> choices;
    for (std::size_t p = 0; p < slots; ++p) {
      if (!used_[p]) continue;
      keys.push_back(keys_[p]);
      choices.push_back(choice_of(keys_[p], static_cast<std::uint32_t>(p / kLudoSlots)));
    }
    OthelloConfig locator_config;
    locator_config.capacity = static_cast<std::uint32_t>(slots);
    locator_config.value_bits = 1;
    locator_config.seed = rng_.next();
    locator_ = std::make_unique<OthelloBuilder<Key>>(locator_config);
    locator_->assign(keys, choices);
    break;
  }
  size_ = items.size();
  LudoMessage<Key> message;
  message.image = std::make_shared<const LudoImage<Key>>(export_image());
  return message;
}

template <CompactKey Key>
LudoImage<Key> LudoBuilder<Key>::export_image() const {
  LudoImage<Key> image{shape_, locator_->export_image(), PackedCells(shape_.buckets, shape_.seed_bits),
                       PackedCells(std::size_t{shape_.buckets} * kLudoSlots, shape_.value_bits), overflow_, fallback_};
  for (std::uint32_t b = 0; b < shape_.buckets; ++b) {
    const LudoBucketWrite w = bucket_write(b);
    image.seeds.set(b, std::min(w.seed, shape_.overflow_marker()));
    for (std::uint32_t s = 0; s < kLudoSlots; ++s) image.slots.set(b * kLudoSlots + s, w.slots[s]);
  }
  return image;
}

template <CompactKey Key>
std::size_t LudoBuilder<Key>::overflowing_buckets() const {
  return static_cast<std::size_t>(std::count_if(seeds_.begin(), seeds_.end(), [&](std::uint8_t s) { return s >= shape_.overflow_marker(); }));
}

template <CompactKey Key>
std::size_t LudoBuilder<Key>::fallback_size() const {
  return static_cast<std::size_t>(std::count_if(fallback_.begin(), fallback_.end(), [](const auto& e) { return e.used != 0; }));
}

template <CompactKey Key>
bool LudoBuilder<Key>::seeds_valid() const {
  for (std::uint32_t b = 0; b < shape_.buckets; ++b) {
    unsigned taken = 0;
    for (std::uint32_t s = 0; s < kLudoSlots; ++s) {
      const std::uint32_t p = b * kLudoSlots + s;
      if (!used_[p]) continue;
      const unsigned bit = 1u << ludo_slot(keys_[p], seeds_[b]);
      if (taken & bit) return false;
      taken |= bit;
    }
  }
  return true;
}

template class LudoBuilder<std::uint64_t>;
template class LudoBuilder<FlowKeyV4>;

}  // namespace flowtrack::compact
