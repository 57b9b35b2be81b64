#include "flowtrack/sched/linear_hash_map.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace flowtrack {

LinearHashMap::Shape LinearHashMap::shape_of(unsigned buckets) {
  const unsigned round = static_cast<unsigned>(std::bit_width(buckets)) - 1;  // floor(log2 b)
  return {round, buckets - (1u << round)};
}

std::vector<std::uint16_t> LinearHashMap::core_range(unsigned first, unsigned end) {
  std::vector<std::uint16_t> cores;
  for (unsigned core = first; core < end; ++core) cores.push_back(static_cast<std::uint16_t>(core));
  return cores;
}

LinearHashMap::LinearHashMap(std::vector<std::uint16_t> cores) : buckets_(std::move(cores)) {
  if (buckets_.empty()) throw std::invalid_argument("a map table needs at least one core");
  reshape();
}

void LinearHashMap::reshape() {
  if (buckets_.size() > 65536) throw std::invalid_argument("a CRC-16 map table has at most 65536 buckets");
  shape_ = shape_of(buckets());
  low_mask_ = (1u << shape_.round) - 1;
}

void LinearHashMap::add_core(unsigned core) {
  // The new bucket is 2^i + p: exactly the keys of bucket p with bit i set, now that p advances past it.
  buckets_.push_back(static_cast<std::uint16_t>(core));
  reshape();
}

void LinearHashMap::remove_core(unsigned core) {
  const auto leaving = std::find(buckets_.begin(), buckets_.end(), core);
  if (leaving == buckets_.end()) throw std::invalid_argument("the core holds no bucket of this map table");
  if (buckets_.size() == 1) throw std::invalid_argument("a map table cannot give up its last core");
  // The last bucket's core covers the leaving core's bucket; the last bucket merges into its partner.
  *leaving = buckets_.back();
  buckets_.pop_back();
  reshape();
}

}  // namespace flowtrack
