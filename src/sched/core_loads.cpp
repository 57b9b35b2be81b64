#include "flowtrack/sched/core_loads.hpp"

namespace flowtrack {

unsigned CoreLoads::least_loaded(std::span<const std::uint16_t> among) const {
  unsigned best = among[0];
  for (std::uint16_t core : among.subspan(1)) {
    if (load_[core] < load_[best]) best = core;
  }
  return best;
}

unsigned CoreLoads::least_loaded() const {
  unsigned best = 0;
  for (unsigned core = 1; core < load_.size(); ++core) {
    if (load_[core] < load_[best]) best = core;
  }
  return best;
}

}  // namespace flowtrack
