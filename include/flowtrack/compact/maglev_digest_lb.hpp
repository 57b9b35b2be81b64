// The Maglev-style load balancer of the Concury comparison, as a lookup structure: per VIP a
// DigestConnTable of its connections (full keys, 16-bit digests) and a new-connection row (Maglev's
// lookup table: a DIP per hash bucket, shares following the weights). A stored connection gets its
// DIP; any other key the row's entry for its hash. Its bulk path gets the care Concury's gets: each key
// hashed once, every line its two buckets span prefetched for a whole chunk before any is read, by the
// same rule (prefetch_policy.hpp: only when the tables exceed what this core's L2 keeps).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/compact/digest_conn_table.hpp"
#include "flowtrack/compact/lb_query.hpp"

namespace flowtrack::compact {

class MaglevDigestLb {
 public:
  // `row`: 2^k entries. The table is sized for `capacity` connections.
  std::uint32_t add_vip(std::vector<std::uint16_t> row, std::uint32_t capacity, std::uint64_t seed);

  bool insert(std::uint32_t vip, std::uint64_t key, std::uint16_t dip) { return vips_[vip].table.insert(key, dip); }
  // The DIP a new connection of the VIP gets.
  std::uint16_t new_connection_dip(std::uint32_t vip, std::uint64_t key) const;
  std::uint16_t lookup(std::uint32_t vip, std::uint64_t key) const;
  void lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips) const;

  std::size_t bytes() const;

 private:
  struct Vip {
    DigestConnTable table;
    std::vector<std::uint16_t> row;
  };
  std::vector<Vip> vips_;
  std::size_t table_bytes_ = 0;  // of every VIP's table (their capacity is fixed at add_vip)
  bool prefetch_ = false;        // whether lookup_bulk prefetches, from table_bytes_
};

}  // namespace flowtrack::compact
