// First come, first served at packet level, the paper's worst baseline: every packet goes to the least
// loaded core of the system (ties: the lowest core id), whatever its flow or service. It balances load
// best and pays for it in reordering, flow-state and instruction-cache misses.
#pragma once

#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/flow_scheduler.hpp"

namespace flowtrack {

class FcfsScheduler final : public FlowScheduler {
 public:
  explicit FcfsScheduler(const CoreLoads& loads) : loads_(loads) {}

  unsigned core_for(const PacketRef& /*packet*/, Picos /*now*/) override { return loads_.least_loaded(); }

 private:
  const CoreLoads& loads_;
};

}  // namespace flowtrack
