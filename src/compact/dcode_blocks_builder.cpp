#include "flowtrack/compact/dcode_blocks_builder.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "flowtrack/util/assert.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::compact {

namespace {

constexpr unsigned kMaxBlockCells = kDcodeLineBits - kDcodeHeaderBits;  // 1-bit cells
constexpr std::uint32_t kNoEdge = ~std::uint32_t{0};

struct BlockKey {
  std::uint64_t key, h;
  std::uint32_t dcode;
};

// Writes `value` (< 2^bits) at line bit `bit` on; the cell may straddle two words.
void put_cell(DcodeLine& line, unsigned bit, std::uint64_t value, unsigned bits) {
  line.words[bit / 64] |= value << (bit % 64);
  if (bit % 64 + bits > 64) line.words[bit / 64 + 1] |= value >> (64 - bit % 64);
}

// Solves one block at a time: a seed under which its graph (cells as vertices, keys as edges) is
// acyclic, or the one with the fewest cycle-closing edges, whose keys are bumped; then its line.
class BlockSolver {
 public:
  explicit BlockSolver(const DcodeGeometry& g) : g_(g) {}

  // Room for a block of `keys` keys.
  void reserve(std::size_t keys) {
    if (edges_.size() < keys) {
      edges_.resize(keys);
      next_.resize(2 * keys);
    }
  }

  // Fills `line` with the keys' block (at most reserve()'s keys). Keys bumped are appended to `bumped`.
  // `first_seed` is tried first, then the others from 0 on. `previous`, when given, is the block's line
  // in use: its cells give the roots their values (see fill).
  void solve(std::span<const BlockKey> keys, unsigned first_seed, const DcodeLine* previous, Random& rng, DcodeLine& line,
             std::vector<BlockKey>& bumped) {
    unsigned best_seed = first_seed, best_cycles = cycle_edges(keys, best_seed, ~0u);
    for (unsigned seed = 0; seed < kDcodeSeeds && best_cycles != 0; ++seed) {
      if (seed == first_seed) continue;
      const unsigned cycles = cycle_edges(keys, seed, best_cycles);
      if (cycles < best_cycles) best_seed = seed, best_cycles = cycles;
    }
    fill(keys, best_seed, previous, rng, line, bumped);
  }

 private:
  void reset_sets() {
    for (unsigned c = 0; c < g_.cells(); ++c) parent_[c] = static_cast<std::uint16_t>(c);
  }
  unsigned find(unsigned c) {
    while (parent_[c] != c) {
      parent_[c] = parent_[parent_[c]];  // path halving
      c = parent_[c];
    }
    return c;
  }
  // Joins the sets of the edge's cells; false when they were one set already (the edge closes a cycle).
  bool join(const DcodeCells& e) {
    const unsigned a = find(e.a), b = find(e.b);
    if (a == b) return false;
    parent_[a] = static_cast<std::uint16_t>(b);
    return true;
  }

  // The edges that close a cycle, taken in order, under `seed`; counting stops at `limit`.
  unsigned cycle_edges(std::span<const BlockKey> keys, unsigned seed, unsigned limit) {
    reset_sets();
    unsigned cycles = 0;
    for (const BlockKey& k : keys) {
      if (!join(dcode_cells(k.h, seed, g_)) && ++cycles >= limit) break;
    }
    return cycles;
  }

  // The line under `seed`: the forest's edges (the keys that close no cycle, in order) fix their cells
  // from each tree's root; the other keys are bumped. A root (every free cell is one) keeps its value in
  // `previous` when given, else gets random bits. So with the seed in use, a tree whose edges the line
  // in use satisfies keeps every cell, and an unknown key keeps its Dcode unless a cell of it lies in
  // a tree whose edges changed. (Previous cells are uniform bits as random ones are, and an unknown
  // key's own bits make its Dcode uniform in any case.)
  void fill(std::span<const BlockKey> keys, unsigned seed, const DcodeLine* previous, Random& rng, DcodeLine& line,
            std::vector<BlockKey>& bumped) {
    reset_sets();
    head_.fill(kNoEdge);
    bool any_bumped = false;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const DcodeCells e = dcode_cells(keys[i].h, seed, g_);
      edges_[i] = e;
      if (!join(e)) {
        bumped.push_back(keys[i]);
        any_bumped = true;
        continue;
      }
      // Each edge is listed at both its cells: end 2i at a, 2i + 1 at b.
      next_[2 * i] = head_[e.a];
      head_[e.a] = static_cast<std::uint32_t>(2 * i);
      next_[2 * i + 1] = head_[e.b];
      head_[e.b] = static_cast<std::uint32_t>(2 * i + 1);
    }
    line = DcodeLine{};
    line.words[0] = seed | (any_bumped ? kDcodeBumped : 0);
    visited_.fill(false);
    for (unsigned root = 0; root < g_.cells(); ++root) {
      if (visited_[root]) continue;
      visited_[root] = true;
      value_[root] = (previous != nullptr ? dcode_line_bits(*previous, g_.load_of(root)) : rng.next()) & g_.mask();
      unsigned top = 0;
      stack_[top++] = static_cast<std::uint16_t>(root);
      while (top != 0) {
        const unsigned near = stack_[--top];
        for (std::uint32_t end = head_[near]; end != kNoEdge; end = next_[end]) {
          const std::size_t i = end / 2;
          const unsigned far = end % 2 == 0 ? edges_[i].b : edges_[i].a;
          if (visited_[far]) continue;  // the edge we came by: the graph is a forest
          visited_[far] = true;
          // The edge's value is its Dcode xor the key's own bits (dcode_from_line xors them back).
          value_[far] = value_[near] ^ ((keys[i].dcode ^ dcode_key_bits(keys[i].h, g_.bits)) & g_.mask());
          stack_[top++] = static_cast<std::uint16_t>(far);
        }
      }
    }
    for (unsigned c = 0; c < g_.cells(); ++c) put_cell(line, g_.first_bit(c), value_[c], g_.bits);
  }

  DcodeGeometry g_;
  std::array<std::uint16_t, kMaxBlockCells> parent_, stack_;
  std::array<std::uint32_t, kMaxBlockCells> head_;
  std::array<std::uint64_t, kMaxBlockCells> value_;
  std::array<bool, kMaxBlockCells> visited_;
  std::vector<DcodeCells> edges_;
  std::vector<std::uint32_t> next_;
};

// Keys of a block from in_use's line and overflow: true when every one gets its Dcode there; then the
// keys the line itself does not answer (in in_use's overflow table) are appended to `bumped`.
bool answers_all(const DcodeBlocksImage& in_use, std::uint32_t block, std::span<const BlockKey> keys, std::vector<BlockKey>& bumped) {
  const DcodeGeometry g(in_use.dcode_bits);
  const DcodeLine& line = in_use.lines[block];
  const std::size_t before = bumped.size();
  for (const BlockKey& k : keys) {
    if (in_use.lookup(k.key) != k.dcode) {
      bumped.resize(before);
      return false;
    }
    if (dcode_from_line(line, line.words[0], k.h, g) != k.dcode) bumped.push_back(k);
  }
  return true;
}

// The image: keys bucketed by block (a counting sort), each block kept from in_use or solved, then the
// overflow table. Invariant: a flagged block implies a non-empty table (a block is flagged when it
// bumps a key, or kept from in_use, whose table is then non-empty and kept at its size at least).
DcodeBlocksImage assemble(std::span<const DcodePair> pairs, std::uint32_t nblocks, unsigned dcode_bits, std::uint64_t seed,
                          std::uint64_t fill_seed, const DcodeBlocksImage* in_use) {
  FLOWTRACK_ASSERT(nblocks >= 1 && dcode_bits >= 1 && dcode_bits <= 24, "a block at least; a cell in one 8-byte load");
  const DcodeGeometry g(dcode_bits);
  DcodeBlocksImage image{dcode_bits, seed, std::vector<DcodeLine>(nblocks), {}};
  std::vector<std::uint32_t> start(std::size_t{nblocks} + 1, 0);
  std::vector<std::uint64_t> hash(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    FLOWTRACK_ASSERT(pairs[i].dcode <= g.mask(), "a Dcode of dcode_bits bits");
    hash[i] = seeded_hash(pairs[i].key, seed);
    ++start[dcode_block_of(hash[i], nblocks) + 1];
  }
  std::size_t largest = 0;
  for (std::uint32_t b = 0; b < nblocks; ++b) {
    largest = std::max<std::size_t>(largest, start[b + 1]);
    start[b + 1] += start[b];
  }
  std::vector<BlockKey> keys(pairs.size());
  {
    std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      keys[next[dcode_block_of(hash[i], nblocks)]++] = {pairs[i].key, hash[i], pairs[i].dcode};
    }
  }
  BlockSolver solver(g);
  solver.reserve(largest);
  std::vector<BlockKey> bumped;
  constexpr std::uint64_t kBlockSpread = 0xa0761d6478bd642full;
  for (std::uint32_t b = 0; b < nblocks; ++b) {
    const std::span<const BlockKey> block(keys.data() + start[b], start[b + 1] - start[b]);
    if (in_use != nullptr && answers_all(*in_use, b, block, bumped)) {
      image.lines[b] = in_use->lines[b];
      continue;
    }
    Random rng(fill_seed ^ (b + 1) * kBlockSpread);  // a block's random bits depend on the block alone
    // A block solved again tries its seed in use first, and its roots keep their cells in use.
    const DcodeLine* previous = in_use != nullptr ? &in_use->lines[b] : nullptr;
    const auto first = previous != nullptr ? static_cast<unsigned>(previous->words[0] & kDcodeSeedMask) : 0u;
    solver.solve(block, first, previous, rng, image.lines[b], bumped);
  }
  // The table at most half full, so that every probe ends at a free slot.
  std::size_t slots = bumped.empty() ? 0 : std::bit_ceil(2 * bumped.size());
  if (in_use != nullptr && 2 * bumped.size() <= in_use->overflow.size()) slots = in_use->overflow.size();
  image.overflow.resize(slots);
  for (const BlockKey& k : bumped) {
    std::size_t s = dcode_overflow_start(k.h, slots - 1);
    while (image.overflow[s].code != 0) s = (s + 1) & (slots - 1);
    image.overflow[s] = {k.key, k.dcode | DcodeOverflowSlot::kUsed};
  }
  return image;
}

}  // namespace

std::uint32_t dcode_blocks_for(std::size_t keys, unsigned dcode_bits, double cells_per_key) {
  const double blocks = std::ceil(static_cast<double>(keys) * cells_per_key / DcodeGeometry(dcode_bits).cells());
  return std::max(1u, static_cast<std::uint32_t>(blocks));
}

DcodeBlocksImage build_dcode_blocks(std::span<const DcodePair> pairs, std::uint32_t nblocks, unsigned dcode_bits,
                                    std::uint64_t seed, std::uint64_t fill_seed) {
  return assemble(pairs, nblocks, dcode_bits, seed, fill_seed, nullptr);
}

DcodeBlocksImage rebuild_dcode_blocks(const DcodeBlocksImage& in_use, std::span<const DcodePair> pairs) {
  // No fill seed: every root keeps its cell in use, so no random bits are drawn.
  return assemble(pairs, in_use.nblocks(), in_use.dcode_bits, in_use.seed, 0, &in_use);
}

}  // namespace flowtrack::compact
