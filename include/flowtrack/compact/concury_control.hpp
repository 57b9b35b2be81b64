// Concury's control plane: per VIP an OthelloMap of the connections it knows (4-tuple -> Dcode), the
// VIP's DIPs and weights, and the Dcode -> DIP row derived from them (weighted_codes.hpp).
//
// Connections are learnt from reports (the data plane tells which Dcode a new connection got); learning
// changes no data-plane array. Only a pool or weight change rewrites one VIP's arrays: the new row is
// computed, every known connection whose Dcode now points elsewhere gets a new Dcode inside the range of
// its old DIP, and the OthelloMap's graph is refilled with the Dcodes (no rehash: the graph is acyclic
// already). So every known connection whose DIP stays in the pool keeps its DIP; connections of a DIP
// left out of the list cannot, and are counted. A DIP listed with weight 0 (drained, or removed but
// still serving connections) that holds known connections keeps one Dcode, its pin, taken from the
// largest range: its connections keep it, and a new connection lands on it with odds 2^-dcode_bits per
// pin (the network function sends those elsewhere, keep()). A connection the control plane has not
// heard of yet is not protected: the network function must report new connections before it asks for
// a rewrite (or count the misses).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/compact/concury_lookup.hpp"
#include "flowtrack/compact/othello_map.hpp"

namespace flowtrack::compact {

class ConcuryControl {
 public:
  // A row entry when no DIP of the VIP takes connections and none holds any.
  static constexpr std::uint16_t kNoDip = 0xffff;

  // `layout`: the arrays image() makes (ConcuryLookup's layouts), for a lookup structure of that layout.
  explicit ConcuryControl(unsigned dcode_bits = 12, std::uint64_t seed = 1, ConcuryLayout layout = ConcuryLayout::pairs);

  std::uint32_t add_vip(std::vector<std::uint16_t> dips, std::vector<double> weights, std::uint32_t expected_connections = 1024);
  // The VIP's data-plane arrays as they must be now (for ConcuryLookup::add_vip / apply). Given the
  // arrays now in use, a connection not known yet keeps its Dcode unless what it reads changed: in the
  // pairs layout every tree of the graph whose edges they satisfy keeps its cells (OthelloBuilder::refill);
  // in the blocks layout every block that answers all its known keys stays as it is, and the others are
  // solved again from their seed and cells in use (rebuild_dcode_blocks), while the VIP's blocks hold its
  // connections at most kBlocksRegrowLoad times the load they were sized for.
  // (Not const: the VIP's OthelloMap may first take its parked connections into its graph.)
  ConcuryVipImage image(std::uint32_t vip, const ConcuryVipImage* in_use = nullptr);

  // Learns a connection with its Dcode; true when it was new (a known one keeps the Dcode given).
  bool learn(std::uint32_t vip, std::uint64_t key, std::uint32_t dcode);
  // A batch of reports (the data plane's reports of new connections), learnt in order as learn() would,
  // with the misses of several reports in flight at once; returns how many were new, and when `fresh` is
  // not empty (one entry a report) tells which.
  // The key first: 16 bytes, not 24 (set by designated initializers, so that no site swaps fields).
  struct Report {
    std::uint64_t key;
    std::uint32_t vip;
    std::uint32_t dcode;
  };
  std::size_t learn_all(std::span<const Report> reports, std::span<bool> fresh = {});
  // learn() and dip_of() read two lines that miss at scale, one after the other (OthelloMap's index
  // cells, then the key they point at). A caller with several keys to ask about (a burst's openings
  // and answers) overlaps them: prefetch_cells for every key, then prefetch_key for every key, then asks.
  [[gnu::always_inline]] void prefetch_cells(std::uint32_t vip, std::uint64_t key) const {
    vips_[vip].connections.prefetch_cells(key);
  }
  [[gnu::always_inline]] void prefetch_key(std::uint32_t vip, std::uint64_t key) const { vips_[vip].connections.prefetch_key(key); }
  void forget(std::uint32_t vip, std::uint64_t key);
  // A batch of departures (connections ended), forgotten in order as forget() would, with the misses of
  // several in flight at once.
  struct Departure {
    std::uint32_t vip;
    std::uint64_t key;
  };
  void forget_all(std::span<const Departure> departures);
  // Changes the pool; returns how many known connections lost their DIP (it left the list).
  std::size_t set_pool(std::uint32_t vip, std::vector<std::uint16_t> dips, std::vector<double> weights);
  // Makes `key` a known connection of `dip` (a DIP of the VIP's list) with a Dcode of dip's range,
  // pinning one for dip first when it has none. Returns true when that changed the row (every change
  // of the control plane reaches the data plane only through image()).
  bool keep(std::uint32_t vip, std::uint64_t key, std::uint16_t dip);
  // The VIP's arrays after a keep() that changed no row, from the arrays in use: in the pairs layout
  // those with one tree of cells changed for the key, O(that tree), where the OthelloMap allows
  // (OthelloMap::restate), else image(vip, &in_use).
  ConcuryVipImage image_after_keep(std::uint32_t vip, std::uint64_t key, const ConcuryVipImage& in_use);

  std::optional<std::uint16_t> dip_of(std::uint32_t vip, std::uint64_t key) const;
  // True when `dip` is in the VIP's list (whatever its weight): keep() may name it.
  bool lists(std::uint32_t vip, std::uint16_t dip) const;
  // The DIP of a Dcode in the VIP's current row.
  std::uint16_t dip_at(std::uint32_t vip, std::uint32_t dcode) const { return vips_[vip].row[dcode]; }
  std::size_t connections(std::uint32_t vip) const { return vips_[vip].connections.size(); }
  unsigned dcode_bits() const { return dcode_bits_; }

 private:
  // Blocks are sized for a VIP's connections (or the expected ones, whichever is more) at the builder's
  // load; past this factor of it, image() sizes them again (another geometry, see ConcuryLookup).
  static constexpr double kBlocksRegrowLoad = 1.25;

  ConcuryVipImage blocks_image(std::uint32_t index, const ConcuryVipImage* in_use) const;

  struct Vip {
    OthelloMap<std::uint64_t> connections;  // 4-tuple -> Dcode
    std::uint32_t expected_connections;
    std::vector<std::uint16_t> dips;
    std::vector<double> weights;
    std::vector<std::uint16_t> row;  // Dcode -> DIP
    std::uint64_t fill_seed;
  };

  // The row for a pool: the weights' shares, then a pin for each DIP of `pinned` that has no code.
  std::vector<std::uint16_t> make_row(std::span<const std::uint16_t> dips, std::span<const double> weights,
                                      std::span<const std::uint16_t> pinned) const;
  // set_pool's work, with `also_pin` pinned (when it has no code) as if it held a known connection.
  std::size_t reshape(Vip& vip, std::vector<std::uint16_t> dips, std::vector<double> weights, std::optional<std::uint16_t> also_pin);

  unsigned dcode_bits_;
  std::uint64_t seed_;
  ConcuryLayout layout_;
  std::vector<Vip> vips_;
};

}  // namespace flowtrack::compact
