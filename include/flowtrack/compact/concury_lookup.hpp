// Concury's lookup structure (the data plane of the Concury load balancer), per VIP: an Othello whose
// value for a connection's 4-tuple is a Dcode (12 bits by default), and a Dcode -> DIP row in which every
// entry is a valid DIP of that VIP. A known connection gets the Dcode the control plane stored for it; an
// unknown one gets an arbitrary Dcode, uniform because free cells hold random values, hence a DIP with
// odds following the weights; and every packet of it the same Dcode while the arrays are unchanged.
// Stateful and stateless packets take the same path: two hashes, two cell reads, one row read.
//
// Concurrency: each VIP has its own epoch. A VIP rewrite (a pool or weight change) with the same
// geometry is copied in place under that VIP's epoch, so other VIPs' lookups never wait and this VIP's
// wait only for the copy; a rewrite that changes the arrays' size, and add_vip, need no reader inside.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/compact/othello_lookup.hpp"
#include "flowtrack/compact/version_stripes.hpp"

namespace flowtrack::compact {

struct ConcuryVipImage {
  OthelloImage codes;               // 4-tuple -> Dcode
  std::vector<std::uint16_t> dips;  // Dcode -> DIP id, 2^dcode_bits entries
  friend bool operator==(const ConcuryVipImage&, const ConcuryVipImage&) = default;
};

// One packet's question: which VIP (its index) and the connection's 4-tuple as one word.
struct ConcuryQuery {
  std::uint32_t vip;
  std::uint64_t key;
};

class ConcuryLookup {
 public:
  std::uint32_t add_vip(const ConcuryVipImage& image);
  void apply(std::uint32_t vip, const ConcuryVipImage& image);

  std::uint16_t lookup(std::uint32_t vip, std::uint64_t key) const { return answer(vip, key).dip; }
  // The Dcode and the DIP the arrays give the key (a new connection's report carries the Dcode).
  struct Answer {
    std::uint32_t dcode;
    std::uint16_t dip;
  };
  Answer answer(std::uint32_t vip, std::uint64_t key) const { return read(vips_[vip], key); }
  // A burst (a runtime burst of packets): hash all, prefetch every cell, then read.
  void lookup_bulk(std::span<const ConcuryQuery> queries, std::span<std::uint16_t> dips) const;

  ConcuryVipImage image(std::uint32_t vip) const;  // with no concurrent writer
  std::size_t vips() const { return vips_.size(); }
  std::size_t bytes() const;

 private:
  struct Vip {
    std::unique_ptr<OthelloLookup> codes;
    std::vector<std::uint16_t> dips;
    std::unique_ptr<VersionStripes> guard;  // one stripe: the VIP's arrays and row change together
  };
  Answer read(const Vip& vip, std::uint64_t key) const;

  std::vector<Vip> vips_;
};

}  // namespace flowtrack::compact
