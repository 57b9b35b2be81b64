// The compact structures seen through one interface, so that one typed suite (tests/compact) and one
// concurrency test (tests/concurrency) run on Othello, Cuckoo Filtable and Ludo, on both key types.
// A case names the maintenance structure (Builder) and the lookup structure (Lookup) and says how to
// make them, read a value and compare a lookup structure with a fresh export.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/compact/cuckoo_filtable_builder.hpp"
#include "flowtrack/compact/ludo_builder.hpp"
#include "flowtrack/compact/othello_builder.hpp"
#include "support/numbered_keys.hpp"

namespace flowtrack::testing {

template <class Key>
Key compact_key(std::uint64_t n) {
  if constexpr (std::is_same_v<Key, std::uint64_t>) {
    return (n + 1) * 0x9E3779B97F4A7C15ull;
  } else {
    return numbered_key<Key>(n);
  }
}

template <class KeyT>
struct OthelloCase {
  using Key = KeyT;
  using Builder = compact::OthelloBuilder<Key>;
  using Lookup = compact::OthelloLookup;
  static Builder make(std::uint32_t capacity, unsigned value_bits, std::uint64_t seed) {
    compact::OthelloConfig c;
    c.capacity = capacity;
    c.value_bits = value_bits;
    c.emptiness = true;
    c.seed = seed;
    return Builder(c);
  }
  static std::unique_ptr<Lookup> export_lookup(const Builder& b) { return std::make_unique<Lookup>(b.export_image()); }
  static std::uint64_t read(const Lookup& l, const Key& k) { return l.lookup(k); }
  static void read_bulk(const Lookup& l, std::span<const Key> keys, std::span<std::uint64_t> out) { l.lookup_bulk(keys, out); }
  static bool identical(const Lookup& l, const Builder& b) { return l.image() == b.export_image(); }
};

template <class KeyT>
struct FiltableCase {
  using Key = KeyT;
  using Builder = compact::FiltableBuilder<Key>;
  using Lookup = compact::FiltableLookup<Key>;
  static Builder make(std::uint32_t capacity, unsigned value_bits, std::uint64_t seed) {
    compact::FiltableConfig c;
    c.capacity = capacity;
    c.value_bits = value_bits;
    c.fingerprint_bits = 8;  // short: collisions (and level 2) happen in small tests too
    c.seed = seed;
    return Builder(c);
  }
  static std::unique_ptr<Lookup> export_lookup(const Builder& b) { return std::make_unique<Lookup>(b.export_image()); }
  static std::uint64_t read(const Lookup& l, const Key& k) { return l.find(k).value_or(~0ull); }
  static void read_bulk(const Lookup& l, std::span<const Key> keys, std::span<std::uint64_t> out) {
    std::vector<std::optional<std::uint64_t>> found(keys.size());
    l.find_bulk(keys, found);
    for (std::size_t i = 0; i < keys.size(); ++i) out[i] = found[i].value_or(~0ull);
  }
  static bool identical(const Lookup& l, const Builder& b) { return l.image() == b.export_image(); }
};

template <class KeyT>
struct LudoCase {
  using Key = KeyT;
  using Builder = compact::LudoBuilder<Key>;
  using Lookup = compact::LudoLookup<Key>;
  static Builder make(std::uint32_t capacity, unsigned value_bits, std::uint64_t seed) {
    compact::LudoConfig c;
    c.capacity = capacity;
    c.value_bits = value_bits;
    c.seed = seed;
    return Builder(c);
  }
  static std::unique_ptr<Lookup> export_lookup(const Builder& b) { return std::make_unique<Lookup>(b.export_image()); }
  static std::uint64_t read(const Lookup& l, const Key& k) { return l.lookup(k); }
  static void read_bulk(const Lookup& l, std::span<const Key> keys, std::span<std::uint64_t> out) { l.lookup_bulk(keys, out); }
  static bool identical(const Lookup& l, const Builder& b) { return l.image() == b.export_image(); }
};

}  // namespace flowtrack::testing
