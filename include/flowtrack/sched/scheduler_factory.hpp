// Builds a scheduler from its policy name: what the simulator and the CLI choose at run time.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/flow_scheduler.hpp"
#include "flowtrack/sched/scheduler_config.hpp"

namespace flowtrack {

// "laps", "afs", "fcfs", "rss".
std::span<const std::string_view> scheduler_policies();

// The scheduler reads `loads`, which must outlive it. Throws std::invalid_argument for an unknown
// policy or an invalid configuration.
std::unique_ptr<FlowScheduler> make_scheduler(std::string_view policy, const SchedulerConfig& config,
                                              const CoreLoads& loads);

}  // namespace flowtrack
