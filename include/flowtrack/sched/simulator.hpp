// The discrete-event simulator of a multicore network processor fed by a flow scheduler.
//
// Model: every service has its own header trace (replayed in a loop) and its own Poisson arrivals from
// the rate model. Each arrival asks the scheduler for a core; a core with a full input queue drops the
// packet; otherwise the core serves its queue FIFO, run to completion, one packet at a time, each packet
// costing its service's processing time plus the locality penalties it incurs (service_costs.hpp).
//
// Events without one event per packet: the only pending events are each service's next arrival and each
// busy core's next completion, so the event heap holds at most cores entries and arrivals are merged
// from services in order; a queued packet is a 16-byte descriptor in a preallocated ring. Nothing is
// allocated per packet. Same configuration, traces and seed: same result, bit for bit.
//
// Out of order (per flow): a delivered packet is out of order when a packet of its flow that arrived
// after it was delivered before it. Dropped packets are never delivered and so never out of order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowtrack/sched/header_trace.hpp"
#include "flowtrack/sched/rate_model.hpp"
#include "flowtrack/sched/scheduler_config.hpp"
#include "flowtrack/sched/service_costs.hpp"

namespace flowtrack {

struct SimConfig {
  SchedulerConfig scheduler;  // cores, services, thresholds, detector
  unsigned queue_capacity = 32;  // descriptors waiting per core (the packet in service excluded)
  std::vector<ServiceCost> services;  // one per scheduler.services; empty: the paper's four
  std::vector<RateParams> rates;      // one per scheduler.services
  Penalties penalties;
  Picos duration = kPicosPerSecond;   // arrivals in [0, duration); queued packets then drain
  Picos rate_epoch = kPicosPerMilli;
  Picos timeline_step = 0;            // 0: no timeline
  // At every migration, count the distinct flows (and the aggressive ones among them) that the core
  // the flow leaves holds, queued or in service (the paper's Fig. 15). Off: no cost.
  bool migration_census = false;
  std::uint64_t seed = 1;
};

struct TimelinePoint {
  double time_s = 0;                  // end of the step
  std::vector<double> offered_mpps;   // per service, over the step
  std::vector<unsigned> cores;        // per service, at the end of the step (shared cores count nowhere)
};

struct SimResult {
  std::string policy;
  std::uint64_t offered = 0;           // arrivals
  std::uint64_t delivered = 0;
  std::uint64_t dropped = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t migrations = 0;
  std::uint64_t core_moves = 0;
  std::uint64_t service_switches = 0;  // packets that paid the service-switch (cold I-cache) penalty
  std::uint64_t flow_moves = 0;        // packets that paid the flow-migration penalty
  double duration_s = 0;
  double wall_s = 0;                   // the simulation alone, traces excluded
  double cpu_s = 0;                    // its thread's CPU time (differs from wall_s on a shared machine)
  std::vector<TimelinePoint> timeline;
  // With the migration census: how many migrations found n distinct flows (n = index) on the core
  // the flow left, and how many found n aggressive flows there; queue capacity + 2 entries each.
  std::vector<std::uint64_t> flows_at_migration;
  std::vector<std::uint64_t> aggressive_at_migration;

  double offered_mpps() const { return static_cast<double>(offered) / duration_s / 1e6; }
  double throughput_mpps() const { return static_cast<double>(delivered) / duration_s / 1e6; }
};

// Service s replays traces[s % traces.size()], from packet s * size / services when a trace is shared,
// with its own flows. Throws std::invalid_argument for an unknown policy, a bad configuration or no
// trace.
SimResult simulate(const SimConfig& config, std::span<const HeaderTrace> traces, std::string_view policy);

}  // namespace flowtrack
