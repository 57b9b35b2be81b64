#include "flowtrack/sched/afs_scheduler.hpp"

namespace flowtrack {

AfsScheduler::AfsScheduler(const SchedulerConfig& config, const CoreLoads& loads)
    : config_((validate(config), config)),
      loads_(loads),
      map_(LinearHashMap::core_range(0, config.cores)),
      migrations_(config.cores) {}

unsigned AfsScheduler::core_for(const PacketRef& packet, Picos /*now*/) {
  const std::optional<unsigned> migrated = migrations_.find(packet.flow);
  const unsigned core = migrated ? *migrated : map_.core_of(packet.crc16);
  if (loads_.load(core) < config_.queue_threshold) return core;
  const unsigned lightest = loads_.least_loaded();
  if (!worth_migrating(config_, loads_.load(core), loads_.load(lightest))) return core;
  migrations_.assign(packet.flow, lightest);
  count_migration(core);
  return lightest;
}

}  // namespace flowtrack
