#include "flowtrack/sched/laps_scheduler.hpp"

#include <algorithm>

namespace flowtrack {
namespace {

std::vector<LinearHashMap> initial_maps(const SchedulerConfig& config) {
  std::vector<LinearHashMap> maps;
  maps.reserve(config.services);
  for (unsigned s = 0; s < config.services; ++s) {
    maps.emplace_back(LinearHashMap::core_range(s * config.cores / config.services, (s + 1) * config.cores / config.services));
  }
  return maps;
}

}  // namespace

LapsScheduler::LapsScheduler(const SchedulerConfig& config, const CoreLoads& loads)
    : config_((validate(config), config)),
      loads_(loads),
      detector_(config.detector),
      migrations_(config.cores),
      maps_(initial_maps(config)),
      owner_(config.cores),
      next_growth_(config.services, 0) {
  for (unsigned s = 0; s < config.services; ++s) {
    for (std::uint16_t core : maps_[s].cores()) owner_[core] = static_cast<int>(s);
  }
}

unsigned LapsScheduler::relieve(const PacketRef& packet, unsigned core, Picos now) {
  // Neither a core to take (the service took one less than an idle threshold ago) nor a flow to move:
  // the least loaded core is not needed.
  const bool may_grow = now >= next_growth_[packet.service];
  const bool aggressive = detector_.aggressive(packet.flow);
  if (!may_grow && !aggressive) return core;
  const unsigned lightest = loads_.least_loaded(maps_[packet.service].cores());
  if (may_grow && loads_.load(lightest) >= config_.overload_low_water) take_surplus_core(packet.service, now);
  if (!aggressive || !worth_migrating(config_, loads_.load(core), loads_.load(lightest))) return core;
  migrations_.assign(packet.flow, lightest);
  count_migration(core);
  return lightest;
}

void LapsScheduler::take_surplus_core(unsigned service, Picos now) {
  // The surplus list, kept implicitly: a core is surplus from idle_since + idle threshold on, so the one
  // marked longest is the idle core with the earliest idle_since. Its service must be able to spare it.
  // When there is none, no core can turn surplus before the earliest of: an idle core reaching the
  // threshold, or a core going idle now and waiting the whole threshold; the search rests until then.
  // (One case is seen late, by at most one threshold: a surplus core whose service was down to its
  // minimum and has since gained a core.)
  int chosen = -1;
  Picos next_surplus = now + config_.idle_threshold;
  for (unsigned core = 0; core < config_.cores; ++core) {
    const int donor = owner_[core];
    if (donor == static_cast<int>(service) || !loads_.idle(core)) continue;
    const Picos surplus_from = loads_.idle_since(core) + config_.idle_threshold;
    if (now < surplus_from) {
      next_surplus = std::min(next_surplus, surplus_from);
      continue;
    }
    if (maps_[donor].buckets() <= config_.min_cores_per_service) continue;
    if (chosen < 0 || loads_.idle_since(core) < loads_.idle_since(static_cast<unsigned>(chosen))) {
      chosen = static_cast<int>(core);
    }
  }
  if (chosen < 0) {
    next_growth_[service] = next_surplus;
    return;
  }
  const auto core = static_cast<unsigned>(chosen);
  maps_[owner_[core]].remove_core(core);
  migrations_.invalidate_core(core);
  maps_[service].add_core(core);
  owner_[core] = static_cast<int>(service);
  next_growth_[service] = now + config_.idle_threshold;
  ++counters_.core_moves;
}

}  // namespace flowtrack
