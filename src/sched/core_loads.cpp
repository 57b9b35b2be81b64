#include "flowtrack/sched/core_loads.hpp"

#include <algorithm>

namespace flowtrack {

// Selects, not branches: which core is lighter is data, not a pattern the predictor learns. The least
// load so far is carried along, so each step waits on a compare and a select, not on a load of the
// current best's entry.
unsigned CoreLoads::least_loaded(std::span<const std::uint16_t> among) const {
  unsigned best = among[0];
  std::uint32_t least = load_[best];
  for (std::uint16_t core : among.subspan(1)) {
    const bool lighter = load_[core] < least;
    best = lighter ? core : best;
    least = lighter ? load_[core] : least;
  }
  return best;
}

unsigned CoreLoads::least_loaded() const {
  // Over every core: the least load first (a min reduction the compiler vectorises), then the first
  // core that holds it.
  std::uint32_t least = load_[0];
  for (const std::uint32_t load : load_) least = std::min(least, load);
  return static_cast<unsigned>(std::find(load_.begin(), load_.end(), least) - load_.begin());
}

}  // namespace flowtrack
