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

// What every case shares: export a lookup structure, compare it with a fresh export.
template <class BuilderT, class LookupT>
struct CaseCommon {
  using Builder = BuilderT;
  using Lookup = LookupT;
  static std::unique_ptr<Lookup> export_lookup(const Builder& b) { return std::make_unique<Lookup>(b.export_image()); }
  static bool identical(const Lookup& l, const Builder& b) { return l.image() == b.export_image(); }
};

// Structures answering lookup(key) -> value (Othello, Ludo).
template <class KeyT, class BuilderT, class LookupT>
struct ValueCase : CaseCommon<BuilderT, LookupT> {
  using Key = KeyT;
  static std::uint64_t read(const LookupT& l, const Key& k) { return l.lookup(k); }
  static void read_bulk(const LookupT& l, std::span<const Key> keys, std::span<std::uint64_t> out) {
    l.lookup_bulk(keys, out);
  }
};

template <class KeyT>
struct OthelloCase : ValueCase<KeyT, compact::OthelloBuilder<KeyT>, compact::OthelloLookup> {
  static compact::OthelloBuilder<KeyT> make(std::uint32_t capacity, unsigned value_bits, std::uint64_t seed) {
    compact::OthelloConfig c;
    c.capacity = capacity;
    c.value_bits = value_bits;
    c.emptiness = true;
    c.seed = seed;
    return compact::OthelloBuilder<KeyT>(c);
  }
};

template <class KeyT>
struct LudoCase : ValueCase<KeyT, compact::LudoBuilder<KeyT>, compact::LudoLookup<KeyT>> {
  static compact::LudoBuilder<KeyT> make(std::uint32_t capacity, unsigned value_bits, std::uint64_t seed) {
    compact::LudoConfig c;
    c.capacity = capacity;
    c.value_bits = value_bits;
    c.seed = seed;
    return compact::LudoBuilder<KeyT>(c);
  }
};

// Cuckoo Filtable answers find(key) -> optional; a miss reads as ~0.
template <class KeyT>
struct FiltableCase : CaseCommon<compact::FiltableBuilder<KeyT>, compact::FiltableLookup<KeyT>> {
  using Key = KeyT;
  using Lookup = compact::FiltableLookup<Key>;
  static compact::FiltableBuilder<Key> make(std::uint32_t capacity, unsigned value_bits, std::uint64_t seed) {
    compact::FiltableConfig c;
    c.capacity = capacity;
    c.value_bits = value_bits;
    c.fingerprint_bits = 8;  // short: collisions (and level 2) happen in small tests too
    c.seed = seed;
    return compact::FiltableBuilder<Key>(c);
  }
  static std::uint64_t read(const Lookup& l, const Key& k) { return l.find(k).value_or(~0ull); }
  static void read_bulk(const Lookup& l, std::span<const Key> keys, std::span<std::uint64_t> out) {
    std::vector<std::optional<std::uint64_t>> found(keys.size());
    l.find_bulk(keys, found);
    for (std::size_t i = 0; i < keys.size(); ++i) out[i] = found[i].value_or(~0ull);
  }
};

}  // namespace flowtrack::testing
