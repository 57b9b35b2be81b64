// The knobs every flow scheduler is built from. Defaults are the paper's where it gives a value
// (16 cores, 4 services, 16-entry AFC, 512-entry annex, 10 us idle threshold) and documented choices
// where it does not (docs/performance/scheduling.md, "Choices").
#pragma once

#include <cstdint>

#include "flowtrack/sched/detector_config.hpp"
#include "flowtrack/sched/picos.hpp"

namespace flowtrack {

// Where a flow leaving an overloaded core may go. The paper says "the least loaded core"; moving onto a
// core that is itself overloaded only shuffles the flow (and, under saturation, moves flows on every
// packet), so by default the target must be under the threshold; `any_lighter` is the literal reading.
enum class MigrationTarget : std::uint8_t { under_threshold, any_lighter };

struct SchedulerConfig {
  unsigned cores = 16;
  unsigned services = 4;
  // qthresh: a core whose load (queue + the packet in service) reaches this is overloaded, and flows
  // headed for it may migrate (LAPS: aggressive ones, within the service; AFS: any, to any core).
  unsigned queue_threshold = 16;
  MigrationTarget migration_target = MigrationTarget::under_threshold;
  // LAPS: a service is overloaded, and asks for a surplus core, when even its least loaded core holds
  // this many packets (migration inside the service cannot help any more).
  unsigned overload_low_water = 8;
  // LAPS: a core idle this long is surplus; a service takes at most one core per this period.
  Picos idle_threshold = 10 * kPicosPerMicro;
  unsigned min_cores_per_service = 1;
  DetectorConfig detector;
};

// Whether a flow on a core holding `from_load` packets should move to one holding `to_load`.
inline bool worth_migrating(const SchedulerConfig& config, unsigned from_load, unsigned to_load) {
  return config.migration_target == MigrationTarget::under_threshold ? to_load < config.queue_threshold
                                                                     : to_load < from_load;
}

// Throws std::invalid_argument with a readable reason for an impossible configuration.
void validate(const SchedulerConfig& config);

}  // namespace flowtrack
