// LAPS, the locality-aware packet scheduler: each service owns a set of cores and a linear-hashing map
// table over them; a packet goes to its migration-table core if it has one, else to its bucket's core.
// When that core is overloaded and the flow is aggressive, the flow moves to the service's least loaded
// core for good (migration table). When the whole service is overloaded, it takes the core of another
// service that has been surplus (idle for the idle threshold) the longest.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/flow_detector.hpp"
#include "flowtrack/sched/flow_scheduler.hpp"
#include "flowtrack/sched/linear_hash_map.hpp"
#include "flowtrack/sched/migration_table.hpp"
#include "flowtrack/sched/scheduler_config.hpp"

namespace flowtrack {

class LapsScheduler final : public FlowScheduler {
 public:
  // Cores are dealt out in blocks: service s starts with cores [s*n/S, (s+1)*n/S).
  LapsScheduler(const SchedulerConfig& config, const CoreLoads& loads);

  unsigned core_for(const PacketRef& packet, Picos now) override {
    detector_.observe(packet.flow);
    const std::optional<unsigned> migrated = migrations_.find(packet.flow);
    const unsigned core = migrated ? *migrated : maps_[packet.service].core_of(packet.crc16);
    if (loads_.load(core) < config_.queue_threshold) return core;
    return relieve(packet, core, now);
  }
  void prefetch(std::uint64_t flow) const override { migrations_.prefetch(flow); }
  int core_owner(unsigned core) const override { return owner_[core]; }
  bool aggressive(std::uint64_t flow) const override { return detector_.aggressive(flow); }

  const LinearHashMap& map_of(unsigned service) const { return maps_[service]; }
  const AggressiveFlowDetector& detector() const { return detector_; }

 private:
  // The packet's core is overloaded: migrate an aggressive flow, and grow an overloaded service.
  unsigned relieve(const PacketRef& packet, unsigned core, Picos now);
  // Precondition: the service may grow now (now >= next_growth_[service]).
  void take_surplus_core(unsigned service, Picos now);

  SchedulerConfig config_;
  const CoreLoads& loads_;
  AggressiveFlowDetector detector_;
  MigrationTable migrations_;
  std::vector<LinearHashMap> maps_;     // per service
  std::vector<int> owner_;              // per core: its service
  std::vector<Picos> next_growth_;      // per service: earliest time it may take another core
};

}  // namespace flowtrack
