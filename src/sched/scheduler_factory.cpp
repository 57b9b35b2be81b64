#include "flowtrack/sched/scheduler_factory.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "flowtrack/sched/afs_scheduler.hpp"
#include "flowtrack/sched/fcfs_scheduler.hpp"
#include "flowtrack/sched/laps_scheduler.hpp"
#include "flowtrack/sched/rss_scheduler.hpp"

namespace flowtrack {

std::span<const std::string_view> scheduler_policies() {
  static constexpr std::array<std::string_view, 4> kPolicies = {"laps", "afs", "fcfs", "rss"};
  return kPolicies;
}

std::unique_ptr<FlowScheduler> make_scheduler(std::string_view policy, const SchedulerConfig& config,
                                              const CoreLoads& loads) {
  validate(config);
  if (loads.cores() != config.cores) throw std::invalid_argument("the load board and the configuration disagree on cores");
  if (policy == "laps") return std::make_unique<LapsScheduler>(config, loads);
  if (policy == "afs") return std::make_unique<AfsScheduler>(config, loads);
  if (policy == "fcfs") return std::make_unique<FcfsScheduler>(loads);
  if (policy == "rss") return std::make_unique<RssScheduler>(config.cores);
  throw std::invalid_argument("unknown scheduling policy '" + std::string(policy) + "' (laps, afs, fcfs, rss)");
}

}  // namespace flowtrack
