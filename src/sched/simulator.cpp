#include "flowtrack/sched/simulator.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <queue>
#include <stdexcept>

#include "flowtrack/sched/core_loads.hpp"
#include "flowtrack/sched/scheduler_factory.hpp"

namespace flowtrack {
namespace {

constexpr std::uint16_t kNoCore = 0xffff;
constexpr std::uint8_t kNoService = 0xff;

// A packet waiting in (or being served by) a core.
struct Descriptor {
  std::uint32_t flow;     // global flow index
  std::uint32_t seq;      // arrival rank within its flow, from 1
  std::uint32_t work_ps;  // processing time before penalties
  std::uint8_t service;
};

struct FlowState {
  std::uint32_t arrived = 0;         // packets of the flow that have arrived (the last seq handed out)
  std::uint32_t last_delivered = 0;  // highest seq delivered so far (0: none)
  std::uint16_t last_core = kNoCore; // core that processed the flow's previous packet
};

struct CoreState {
  Descriptor serving{};
  bool busy = false;
  std::uint8_t last_service = kNoService;
  std::uint32_t head = 0;     // first waiting descriptor in the core's ring
  std::uint32_t waiting = 0;  // descriptors in the ring
};

// One service's packet source: its trace, looped, and its arrival clock.
struct ServiceStream {
  const HeaderTrace* trace;
  std::vector<std::uint32_t> work_ps;  // per trace packet: the service's processing time
  ArrivalClock clock;
  std::size_t cursor;
  std::uint32_t flow_base;  // global index of the trace's flow 0 for this service
  Picos next_arrival;
  std::uint64_t arrivals_in_step = 0;
};

void check(const SimConfig& config, std::span<const HeaderTrace> traces) {
  validate(config.scheduler);
  const unsigned services = config.scheduler.services;
  if (traces.empty()) throw std::invalid_argument("the simulator needs at least one header trace");
  if (config.rates.size() != services) throw std::invalid_argument("one rate model per service is needed");
  if (!config.services.empty() && config.services.size() != services) {
    throw std::invalid_argument("one service cost per service is needed");
  }
  if (config.services.empty() && services != paper_services().size()) {
    throw std::invalid_argument("the paper's costs cover four services; give costs for any other number");
  }
  if (config.queue_capacity == 0) throw std::invalid_argument("the input queues need at least one descriptor");
  if (config.duration <= 0) throw std::invalid_argument("the simulated duration must be positive");
  if (config.timeline_step < 0) throw std::invalid_argument("the timeline step cannot be negative");
}

class Simulation {
 public:
  Simulation(const SimConfig& config, std::span<const HeaderTrace> traces, std::string_view policy)
      : config_(config),
        loads_(config.scheduler.cores),
        scheduler_(make_scheduler(policy, config.scheduler, loads_)),
        cores_(config.scheduler.cores),
        rings_(static_cast<std::size_t>(config.scheduler.cores) * config.queue_capacity),
        next_sample_(config.timeline_step > 0 ? config.timeline_step : ArrivalClock::kNever) {
    result_.policy = std::string(policy);
    result_.duration_s = picos_to_seconds(config.duration);
    const unsigned services = config.scheduler.services;
    const std::span<const ServiceCost> costs =
        config.services.empty() ? paper_services() : std::span<const ServiceCost>(config.services);
    std::uint64_t flows = 0;
    streams_.reserve(services);
    for (unsigned s = 0; s < services; ++s) {
      const HeaderTrace& trace = traces[s % traces.size()];
      std::vector<std::uint32_t> work(trace.packets());
      for (std::size_t i = 0; i < work.size(); ++i) {
        work[i] = static_cast<std::uint32_t>(processing_time(costs[s], trace.bytes_of_packet[i]));
      }
      // Services sharing a trace start at different places in it.
      const std::size_t start = (s / traces.size()) * trace.packets() * traces.size() / services % trace.packets();
      ArrivalClock clock(config.rates[s], config.rate_epoch, config.duration, config.seed * 1000003 + s);
      streams_.push_back({&trace, std::move(work), clock, start, static_cast<std::uint32_t>(flows), 0});
      streams_.back().next_arrival = streams_.back().clock.next();
      flows += trace.flows();
    }
    if (flows >= UINT32_MAX) throw std::invalid_argument("too many flows for the simulator's 32-bit flow index");
    flows_.resize(flows);
    for (unsigned c = 0; c < cores_.size(); ++c) {
      const int owner = scheduler_->core_owner(c);
      cores_[c].last_service = owner == FlowScheduler::kSharedCore ? kNoService : static_cast<std::uint8_t>(owner);
    }
    std::vector<std::pair<Picos, unsigned>> heap_storage;
    heap_storage.reserve(cores_.size());
    completions_ = decltype(completions_)(std::greater<>(), std::move(heap_storage));
  }

  SimResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    for (;;) {
      ServiceStream* stream = &streams_[0];
      for (ServiceStream& candidate : streams_) {
        if (candidate.next_arrival < stream->next_arrival) stream = &candidate;
      }
      const Picos now = stream->next_arrival;
      if (now == ArrivalClock::kNever) break;
      complete_until(now);
      while (now >= next_sample_) sample();
      arrive(*stream, now);
      stream->next_arrival = stream->clock.next();
    }
    complete_until(ArrivalClock::kNever);
    while (next_sample_ <= config_.duration) sample();
    result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    result_.migrations = scheduler_->counters().migrations;
    result_.core_moves = scheduler_->counters().core_moves;
    return std::move(result_);
  }

 private:
  void arrive(ServiceStream& stream, Picos now) {
    const HeaderTrace& trace = *stream.trace;
    const std::uint32_t local = trace.flow_of_packet[stream.cursor];
    const std::uint32_t work = stream.work_ps[stream.cursor];
    if (++stream.cursor == trace.packets()) stream.cursor = 0;
    const auto service = static_cast<std::uint8_t>(&stream - streams_.data());
    const std::uint32_t flow = stream.flow_base + local;
    ++stream.arrivals_in_step;
    ++result_.offered;
    const std::uint32_t seq = ++flows_[flow].arrived;

    const PacketRef packet{flow, trace.rss_hash_of_flow[local], trace.crc16_of_flow[local], service};
    const unsigned core = scheduler_->core_for(packet, now);
    CoreState& state = cores_[core];
    const Descriptor descriptor{flow, seq, work, service};
    if (!state.busy) {
      loads_.arrive(core);
      start(core, descriptor, now);
      return;
    }
    if (state.waiting == config_.queue_capacity) {
      ++result_.dropped;
      return;
    }
    loads_.arrive(core);
    rings_[ring_slot(core, state.head + state.waiting)] = descriptor;
    ++state.waiting;
  }

  void start(unsigned core, const Descriptor& descriptor, Picos now) {
    CoreState& state = cores_[core];
    Picos done = now + descriptor.work_ps;
    if (state.last_service != descriptor.service) {
      done += config_.penalties.service_switch;
      ++result_.service_switches;
      state.last_service = descriptor.service;
    }
    FlowState& flow = flows_[descriptor.flow];
    if (flow.last_core != kNoCore && flow.last_core != core) {
      done += config_.penalties.flow_migration;
      ++result_.flow_moves;
    }
    flow.last_core = static_cast<std::uint16_t>(core);
    state.serving = descriptor;
    state.busy = true;
    completions_.push({done, core});
  }

  void complete_until(Picos horizon) {
    while (!completions_.empty() && completions_.top().first <= horizon) {
      const auto [now, core] = completions_.top();
      completions_.pop();
      CoreState& state = cores_[core];
      deliver(state.serving);
      loads_.depart(core, now);
      state.busy = false;
      if (state.waiting > 0) {
        const Descriptor next = rings_[ring_slot(core, state.head)];
        state.head = (state.head + 1) % config_.queue_capacity;
        --state.waiting;
        start(core, next, now);
      }
    }
  }

  void deliver(const Descriptor& descriptor) {
    ++result_.delivered;
    FlowState& flow = flows_[descriptor.flow];
    // A later arrival of the flow left first: this packet is out of order.
    if (descriptor.seq < flow.last_delivered) {
      ++result_.out_of_order;
    } else {
      flow.last_delivered = descriptor.seq;
    }
  }

  void sample() {
    TimelinePoint point;
    point.time_s = picos_to_seconds(next_sample_);
    const double step_s = picos_to_seconds(config_.timeline_step);
    for (ServiceStream& stream : streams_) {
      point.offered_mpps.push_back(static_cast<double>(stream.arrivals_in_step) / step_s / 1e6);
      stream.arrivals_in_step = 0;
    }
    point.cores.assign(streams_.size(), 0);
    for (unsigned c = 0; c < cores_.size(); ++c) {
      const int owner = scheduler_->core_owner(c);
      if (owner != FlowScheduler::kSharedCore) ++point.cores[static_cast<std::size_t>(owner)];
    }
    result_.timeline.push_back(std::move(point));
    next_sample_ += config_.timeline_step;
  }

  std::size_t ring_slot(unsigned core, std::uint32_t position) const {
    return static_cast<std::size_t>(core) * config_.queue_capacity + position % config_.queue_capacity;
  }

  const SimConfig& config_;
  CoreLoads loads_;
  std::unique_ptr<FlowScheduler> scheduler_;
  std::vector<CoreState> cores_;
  std::vector<Descriptor> rings_;  // per core, queue_capacity descriptors
  std::vector<ServiceStream> streams_;
  std::vector<FlowState> flows_;
  // Busy cores by completion time (ties: lower core first): at most one entry per core.
  std::priority_queue<std::pair<Picos, unsigned>, std::vector<std::pair<Picos, unsigned>>, std::greater<>> completions_;
  Picos next_sample_;
  SimResult result_;
};

}  // namespace

SimResult simulate(const SimConfig& config, std::span<const HeaderTrace> traces, std::string_view policy) {
  check(config, traces);
  return Simulation(config, traces, policy).run();
}

}  // namespace flowtrack
