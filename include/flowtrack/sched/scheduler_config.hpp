// The knobs every flow scheduler is built from. Defaults are the paper's where it gives a value
// (16 cores, 4 services, 16-entry AFC, 512-entry annex, 10 us idle threshold) and documented choices
// where it does not (docs/results/sched.md, "Choices").
#pragma once

#include "flowtrack/sched/flow_detector.hpp"
#include "flowtrack/sched/picos.hpp"

namespace flowtrack {

struct SchedulerConfig {
  unsigned cores = 16;
  unsigned services = 4;
  // qthresh: a core whose load (queue + the packet in service) reaches this is overloaded, and flows
  // headed for it may migrate (LAPS: aggressive ones, within the service; AFS: any, to any core).
  unsigned queue_threshold = 16;
  // LAPS: a service is overloaded, and asks for a surplus core, when even its least loaded core holds
  // this many packets (migration inside the service cannot help any more).
  unsigned overload_low_water = 8;
  // LAPS: a core idle this long is surplus; a service takes at most one core per this period.
  Picos idle_threshold = 10 * kPicosPerMicro;
  unsigned min_cores_per_service = 1;
  DetectorConfig detector;
};

// Throws std::invalid_argument with a readable reason for an impossible configuration.
void validate(const SchedulerConfig& config);

}  // namespace flowtrack
