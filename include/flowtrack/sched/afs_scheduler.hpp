// Arbitrary flow shift (AFS), the paper's flow-level baseline after Dittmann & Herkersdorf: one CRC-16
// map table over all cores whatever the service, and when a packet's core is overloaded its flow,
// whichever it is, moves to the least loaded core of the system for good (migration table). It keeps
// flows together but ignores which program a core has in its instruction cache.
#pragma once

#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/flow_scheduler.hpp"
#include "flowtrack/sched/linear_hash_map.hpp"
#include "flowtrack/sched/migration_table.hpp"
#include "flowtrack/sched/scheduler_config.hpp"

namespace flowtrack {

class AfsScheduler final : public FlowScheduler {
 public:
  AfsScheduler(const SchedulerConfig& config, const CoreLoads& loads);

  unsigned core_for(const PacketRef& packet, Picos now) override;
  void prefetch(std::uint64_t flow) const override { migrations_.prefetch(flow); }

 private:
  SchedulerConfig config_;
  const CoreLoads& loads_;
  LinearHashMap map_;  // fixed: one bucket per core, never grown
  MigrationTable migrations_;
};

}  // namespace flowtrack
