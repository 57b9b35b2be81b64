// One service's map table, bucket -> core, with one bucket per core the service holds, grown and shrunk
// by linear hashing (Litwin) so that a core added or taken away moves few flows.
//
// State: b buckets = 2^i + p, with round i and split pointer p (0 <= p < 2^i). The hash family is
// h_j(k) = crc16(k) mod 2^j, i.e. the paper's f(k) mod 2^j m with base m = 1: the paper's four initial
// buckets at m = 4 (i = 0, p = 0) are exactly i = 2, p = 0 here, and unlike m = 4 the state stays
// defined when a service is down to fewer than four cores. A key goes to a = h_i(k), or to h_{i+1}(k)
// when a < p (its bucket has already been split this round).
//
// Adding a core splits bucket p: its flows whose bit i is set move to the new bucket 2^i + p, and no
// other flow moves. Taking a core away is the reverse: the core of the last bucket takes the place of
// the leaving core, then the last bucket merges back into the bucket it was split from; only the leaving
// core's and the last bucket's flows move. After either, (i, p) follow from b alone: i = floor(log2 b),
// p = b - 2^i. (The paper's i = b/m - 1 is right only for m <= b < 3m; at m = 4, b = 13 it gives
// i = 2, p = -3 where i = 1, p = 5 is meant.)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace flowtrack {

class LinearHashMap {
 public:
  struct Shape {
    unsigned round;  // i
    unsigned split;  // p
  };
  // Round and split pointer of a table of `buckets` (>= 1) buckets: the corrected formula.
  static Shape shape_of(unsigned buckets);

  // Cores first, first + 1, ..., end - 1: the usual initial bucket list.
  static std::vector<std::uint16_t> core_range(unsigned first, unsigned end);

  // One bucket per core, in order. Throws std::invalid_argument when `cores` is empty.
  explicit LinearHashMap(std::vector<std::uint16_t> cores);

  unsigned bucket_of(std::uint16_t hash) const {
    unsigned a = hash & low_mask_;
    if (a < shape_.split) a = hash & (2 * low_mask_ + 1);
    return a;
  }
  unsigned core_of(std::uint16_t hash) const { return buckets_[bucket_of(hash)]; }

  void add_core(unsigned core);
  // Precondition: `core` holds a bucket and is not the last one. Throws std::invalid_argument otherwise.
  void remove_core(unsigned core);

  std::span<const std::uint16_t> cores() const { return buckets_; }
  unsigned buckets() const { return static_cast<unsigned>(buckets_.size()); }
  Shape shape() const { return shape_; }

 private:
  void reshape();

  std::vector<std::uint16_t> buckets_;  // bucket -> core
  Shape shape_{};
  unsigned low_mask_ = 0;  // 2^i - 1
};

}  // namespace flowtrack
