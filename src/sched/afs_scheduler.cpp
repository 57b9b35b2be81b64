#include "flowtrack/sched/afs_scheduler.hpp"

#include <numeric>

namespace flowtrack {
namespace {

std::vector<std::uint16_t> all_cores(unsigned cores) {
  std::vector<std::uint16_t> list(cores);
  std::iota(list.begin(), list.end(), std::uint16_t{0});
  return list;
}

}  // namespace

AfsScheduler::AfsScheduler(const SchedulerConfig& config, const CoreLoads& loads)
    : queue_threshold_((validate(config), config.queue_threshold)),
      loads_(loads),
      map_(all_cores(config.cores)),
      migrations_(config.cores) {}

unsigned AfsScheduler::core_for(const PacketRef& packet, Picos /*now*/) {
  const std::optional<unsigned> migrated = migrations_.find(packet.flow);
  const unsigned core = migrated ? *migrated : map_.core_of(packet.crc16);
  if (loads_.load(core) < queue_threshold_) return core;
  const unsigned lightest = loads_.least_loaded();
  // As in LAPS, never onto a core that is overloaded itself.
  if (loads_.load(lightest) >= queue_threshold_) return core;
  migrations_.assign(packet.flow, lightest);
  ++counters_.migrations;
  return lightest;
}

}  // namespace flowtrack
