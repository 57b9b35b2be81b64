#include "flowtrack/sched/scheduler_config.hpp"

#include <stdexcept>

#include "flowtrack/sched/lfu_cache.hpp"

namespace flowtrack {

void validate(const SchedulerConfig& config) {
  if (config.cores == 0 || config.cores > 256) throw std::invalid_argument("cores must be in 1..256");
  if (config.services == 0 || config.services > 255) throw std::invalid_argument("services must be in 1..255");
  if (config.min_cores_per_service == 0) throw std::invalid_argument("every service keeps at least one core");
  if (config.cores < config.services * config.min_cores_per_service) {
    throw std::invalid_argument("fewer cores than services x the minimum cores per service");
  }
  if (config.queue_threshold == 0) throw std::invalid_argument("the queue threshold must be at least 1");
  if (config.idle_threshold < 0) throw std::invalid_argument("the idle threshold cannot be negative");
  if (config.detector.cache_entries == 0) throw std::invalid_argument("the aggressive flow cache needs at least one entry");
  if (config.detector.annex_entries > LfuCache::kAnnexWays && config.detector.annex_entries % LfuCache::kAnnexWays != 0) {
    throw std::invalid_argument("the annex holds up to 8 entries or a multiple of 8 (sets of 8 ways)");
  }
  if (!(config.detector.sampling > 0 && config.detector.sampling <= 1)) {
    throw std::invalid_argument("the sampling probability must be in (0, 1]");
  }
}

}  // namespace flowtrack
