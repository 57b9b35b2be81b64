// Othello's lookup structure (the data plane): two arrays A and B of cells and one seeded hash, so that
// a key's value is A[ha(k)] xor B[hb(k)]. No keys are stored; a key never inserted (an alien) gets an
// arbitrary value unless the optional emptiness bit or fingerprint rejects it.
//
// Cell layout, low bit first: [taken bit, if emptiness][value: value_bits][fingerprint: fingerprint_bits].
// A and B live in one PackedCells, B's cells after A's (cell size_a + j is B[j]). The taken bit of a cell
// is 1 exactly when the control plane's graph has an edge there; it is not part of the xor: a member's
// two cells both have it set, so a lookup that finds either one clear has met an alien.
//
// Messages from the control plane (OthelloBuilder) either write a few cells in place (under the version
// stripes: readers never see a half-applied message) or carry a whole new image after a rebuild. An image
// with the same geometry is copied in place under the epoch; one with another geometry (the table grew)
// replaces the arrays and must be applied while no reader is inside (between bursts, or on a fresh
// lookup object the caller publishes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/compact/internal/packed_cells.hpp"
#include "flowtrack/compact/internal/version_stripes.hpp"

namespace flowtrack::compact {

struct OthelloShape {
  std::uint64_t seed = 0;
  std::uint32_t size_a = 0, size_b = 0;
  unsigned value_bits = 1, fingerprint_bits = 0;
  bool emptiness = false;

  unsigned taken_bits() const { return emptiness ? 1u : 0u; }
  unsigned cell_bits() const { return taken_bits() + value_bits + fingerprint_bits; }
  // Everything but the seed: an image of the same geometry can be copied over the old one in place.
  bool same_geometry(const OthelloShape& o) const {
    return size_a == o.size_a && size_b == o.size_b && value_bits == o.value_bits &&
           fingerprint_bits == o.fingerprint_bits && emptiness == o.emptiness;
  }
  friend bool operator==(const OthelloShape&, const OthelloShape&) = default;
};

// The key's two cells (B's already offset by size_a) and its fingerprint, from one or two hashes.
struct OthelloProbe {
  std::uint32_t a, b;
  std::uint64_t fingerprint;
};

// The two cells of a key whose seeded hash is h: A's from the low half, B's (offset by size_a) from the
// high half. Every reader of an Othello goes through here, so all agree with the control plane.
struct OthelloCells {
  std::uint32_t a, b;
};
inline OthelloCells othello_cells(std::uint64_t h, std::uint32_t size_a, std::uint32_t size_b) {
  return {reduce(low_half(h), size_a), size_a + reduce(high_half(h), size_b)};
}

template <CompactKey Key>
OthelloProbe othello_probe(const OthelloShape& shape, const Key& key) {
  constexpr std::uint64_t kFingerprintSalt = 0xf1a9e7d3c5b4a291ull;
  const OthelloCells cells = othello_cells(seeded_hash(key, shape.seed), shape.size_a, shape.size_b);
  OthelloProbe p{cells.a, cells.b, 0};
  if (shape.fingerprint_bits != 0) {
    p.fingerprint = seeded_hash(key, shape.seed ^ kFingerprintSalt) & ((1ull << shape.fingerprint_bits) - 1);
  }
  return p;
}

struct OthelloImage {
  OthelloShape shape;
  PackedCells cells;
  friend bool operator==(const OthelloImage&, const OthelloImage&) = default;
};

struct CellWrite {
  std::uint32_t cell;
  std::uint64_t value;
};

struct OthelloMessage {
  std::vector<CellWrite> writes;               // in place, in any order
  std::shared_ptr<const OthelloImage> image;   // non-null after a rebuild: replaces everything

  bool empty() const { return writes.empty() && !image; }
  // Wire size: a 4-byte cell index and the cell's bytes per write; a whole image when there is one.
  std::size_t bytes() const;
};

class OthelloLookup {
 public:
  explicit OthelloLookup(const OthelloImage& image, std::size_t stripes = 8192);

  void apply(const OthelloMessage& message);

  // The raw value of a member (value bits only); arbitrary for an alien.
  template <CompactKey Key>
  std::uint64_t lookup(const Key& key) const {
    return value_of(read(key));
  }

  // The value, or nullopt when the emptiness bit or the fingerprint proves the key alien.
  template <CompactKey Key>
  std::optional<std::uint64_t> find(const Key& key) const {
    return accept(read(key));
  }

  // A burst: hash every key and prefetch its two cells first, then read (out.size() >= keys.size()).
  template <CompactKey Key>
  void lookup_bulk(std::span<const Key> keys, std::span<std::uint64_t> out) const;

  // Brings the key's two cells towards the cache (bulk lookups of structures built on Othello).
  template <CompactKey Key>
  void prefetch(const Key& key) const {
    prefetch(othello_probe(current_shape(), key));
  }
  void prefetch(const OthelloProbe& p) const {
    __builtin_prefetch(cells_.address_of(p.a));
    __builtin_prefetch(cells_.address_of(p.b));
  }

  OthelloImage image() const { return {shape_, cells_}; }  // with no concurrent writer
  const OthelloShape& shape() const { return shape_; }    // with no concurrent writer
  std::size_t bytes() const { return cells_.bytes() + stripes_.bytes() + sizeof(*this); }
  std::size_t array_bytes() const { return cells_.bytes(); }

 private:
  struct Read {
    std::uint64_t xored, fingerprint;
    bool both_taken;
  };

  // The seed is the one shape field a same-geometry image changes under readers; it is read inside the
  // epoch with a relaxed atomic load.
  OthelloShape current_shape() const {
    OthelloShape s;  // field by field: a plain copy would read the seed non-atomically
    s.seed = load_relaxed(shape_.seed);
    s.size_a = shape_.size_a;
    s.size_b = shape_.size_b;
    s.value_bits = shape_.value_bits;
    s.fingerprint_bits = shape_.fingerprint_bits;
    s.emptiness = shape_.emptiness;
    return s;
  }

  Read read_at(const OthelloProbe& p) const {
    const std::uint64_t a = cells_.get(p.a), b = cells_.get(p.b);
    return {a ^ b, p.fingerprint, ((a & b) & 1) != 0};
  }

  template <CompactKey Key>
  Read read(const Key& key) const {
    for (;;) {
      const std::uint32_t epoch = stripes_.epoch_begin();
      const OthelloProbe p = othello_probe(current_shape(), key);
      const auto snap = stripes_.stripes_begin(epoch, stripes_.stripe_of(p.a), stripes_.stripe_of(p.b));
      const Read r = read_at(p);
      if (stripes_.read_valid(snap, stripes_.stripe_of(p.a), stripes_.stripe_of(p.b))) return r;
    }
  }

  std::uint64_t value_of(const Read& r) const { return (r.xored >> shape_.taken_bits()) & value_mask_; }

  std::optional<std::uint64_t> accept(const Read& r) const {
    if (shape_.emptiness && !r.both_taken) return std::nullopt;
    const std::uint64_t payload = r.xored >> shape_.taken_bits();
    if ((payload >> shape_.value_bits) != r.fingerprint) return std::nullopt;
    return payload & value_mask_;
  }

  OthelloShape shape_;
  std::uint64_t value_mask_;
  PackedCells cells_;
  VersionStripes stripes_;
};

template <CompactKey Key>
void OthelloLookup::lookup_bulk(std::span<const Key> keys, std::span<std::uint64_t> out) const {
  constexpr std::size_t kChunk = 32;
  OthelloProbe probes[kChunk];
  for (std::size_t base = 0; base < keys.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, keys.size() - base);
    const std::uint32_t epoch = stripes_.epoch_begin();
    const OthelloShape shape = current_shape();
    for (std::size_t i = 0; i < n; ++i) {
      probes[i] = othello_probe(shape, keys[base + i]);
      __builtin_prefetch(cells_.address_of(probes[i].a));
      __builtin_prefetch(cells_.address_of(probes[i].b));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const OthelloProbe& p = probes[i];
      const auto snap = stripes_.stripes_begin(epoch, stripes_.stripe_of(p.a), stripes_.stripe_of(p.b));
      const Read r = read_at(p);
      // A write raced with this key: read it again alone (rare; the epoch may have moved too).
      out[base + i] = stripes_.read_valid(snap, stripes_.stripe_of(p.a), stripes_.stripe_of(p.b))
                          ? value_of(r)
                          : value_of(read(keys[base + i]));
    }
  }
}

}  // namespace flowtrack::compact
