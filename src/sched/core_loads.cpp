#include "flowtrack/sched/core_loads.hpp"

namespace flowtrack {

unsigned CoreLoads::least_loaded(std::span<const std::uint16_t> among) const {
  // Selects, not branches: which core is lighter is data, not a pattern the predictor learns.
  unsigned best = among[0];
  for (std::uint16_t core : among.subspan(1)) best = load_[core] < load_[best] ? core : best;
  return best;
}

unsigned CoreLoads::least_loaded() const {
  unsigned best = 0;
  for (unsigned core = 1; core < load_.size(); ++core) best = load_[core] < load_[best] ? core : best;
  return best;
}

}  // namespace flowtrack
