#include "flowtrack/sched/simulator.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
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

// Everything the simulator touches per packet of a flow, in 16 bytes: one cache access per packet.
struct FlowState {
  std::uint32_t arrived = 0;         // packets of the flow that have arrived (the last seq handed out)
  std::uint32_t last_delivered = 0;  // highest seq delivered so far (0: none)
  std::uint32_t rss_hash = 0;
  std::uint16_t crc16 = 0;
  std::uint16_t last_core = kNoCore; // core that processed the flow's previous packet
};
static_assert(sizeof(FlowState) == 16);

// Busy cores by completion time, ties to the lower core: a binary min-heap of keys time << 8 | core
// (times stay below 2^55 ps, cores below 256), at most one entry per core. A core that finishes and
// starts its next packet replaces its own entry at the top: one sift instead of a pop and a push.
// Every slot past the heap's end holds kVacant (above any key), so a sift picks the smaller child
// without asking whether the right one exists: one data-dependent branch less per level.
class CompletionHeap {
 public:
  explicit CompletionHeap(unsigned cores) : keys_(2 * static_cast<std::size_t>(cores) + 2, kVacant) {}

  bool empty() const { return size_ == 0; }
  Picos top_time() const { return keys_[0] >> 8; }
  unsigned top_core() const { return static_cast<unsigned>(keys_[0] & 0xff); }

  void push(Picos time, unsigned core) {
    std::size_t i = size_++;
    const std::int64_t key = encode(time, core);
    while (i > 0 && key < keys_[(i - 1) / 2]) {
      keys_[i] = keys_[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    keys_[i] = key;
  }
  void pop() {
    const std::int64_t last = keys_[--size_];
    keys_[size_] = kVacant;
    if (size_ != 0) sift_down(last);
  }
  void replace_top(Picos time, unsigned core) { sift_down(encode(time, core)); }

 private:
  static constexpr std::int64_t kVacant = INT64_MAX;

  static std::int64_t encode(Picos time, unsigned core) { return (time << 8) | core; }
  // Places `key` at the root's place and lets it sink.
  void sift_down(std::int64_t key) {
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= size_) break;
      child += keys_[child + 1] < keys_[child] ? 1 : 0;
      if (keys_[child] >= key) break;
      keys_[i] = keys_[child];
      i = child;
    }
    keys_[i] = key;
  }

  std::vector<std::int64_t> keys_;  // [0, size_): the heap; the rest kVacant
  std::size_t size_ = 0;
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
  struct Packet {
    std::uint32_t flow;     // global flow index
    std::uint32_t work_ps;  // the service's processing time for it
  };
  std::vector<Packet> packets;  // the trace, as this service replays it
  ArrivalClock clock;
  std::size_t cursor;
  std::uint64_t arrivals_in_step = 0;
};

// A service's next arrival as one integer, time << 8 | service, so that the earliest of all services,
// ties to the lowest service, is a plain minimum (compiled to selects: which service comes next is
// random, a branch on it mispredicts). Times stay below 2^50 ps and services below 256 (check()); a
// service past its horizon holds kNoArrival.
constexpr std::int64_t kNoArrival = INT64_MAX;
std::int64_t arrival_key(Picos time, std::size_t service) {
  return time == ArrivalClock::kNever ? kNoArrival : (time << 8) | static_cast<std::int64_t>(service);
}

// CPU time of the calling thread: on a shared machine, the simulator's own cost, whatever else runs.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

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
  if (config.duration > (Picos{1} << 50)) throw std::invalid_argument("the simulated duration is at most 1125 s");
  if (config.scheduler.cores > 256) throw std::invalid_argument("the simulator handles at most 256 cores");
}

class Simulation {
 public:
  Simulation(const SimConfig& config, std::span<const HeaderTrace> traces, std::string_view policy)
      : config_(config),
        loads_(config.scheduler.cores),
        scheduler_(make_scheduler(policy, config.scheduler, loads_)),
        cores_(config.scheduler.cores),
        rings_(static_cast<std::size_t>(config.scheduler.cores) * config.queue_capacity),
        completions_(config.scheduler.cores),
        next_sample_(config.timeline_step > 0 ? config.timeline_step : ArrivalClock::kNever) {
    result_.policy = std::string(policy);
    if (config.migration_census) {
      census_flows_.reserve(config.queue_capacity + 1);
      result_.flows_at_migration.assign(config.queue_capacity + 2, 0);
      result_.aggressive_at_migration.assign(config.queue_capacity + 2, 0);
    }
    result_.duration_s = picos_to_seconds(config.duration);
    const unsigned services = config.scheduler.services;
    const std::span<const ServiceCost> costs =
        config.services.empty() ? paper_services() : std::span<const ServiceCost>(config.services);
    std::uint64_t flows = 0;
    for (unsigned s = 0; s < services; ++s) flows += traces[s % traces.size()].flows();
    if (flows >= UINT32_MAX) throw std::invalid_argument("too many flows for the simulator's 32-bit flow index");
    flows_.resize(flows);
    streams_.reserve(services);
    std::uint32_t flow_base = 0;
    for (unsigned s = 0; s < services; ++s) {
      const HeaderTrace& trace = traces[s % traces.size()];
      std::vector<ServiceStream::Packet> packets(trace.packets());
      for (std::size_t i = 0; i < packets.size(); ++i) {
        packets[i] = {flow_base + trace.flow_of_packet[i],
                      static_cast<std::uint32_t>(processing_time(costs[s], trace.bytes_of_packet[i]))};
      }
      for (std::size_t f = 0; f < trace.flows(); ++f) {
        flows_[flow_base + f].rss_hash = trace.rss_hash_of_flow[f];
        flows_[flow_base + f].crc16 = trace.crc16_of_flow[f];
      }
      // Services sharing a trace start at different places in it.
      const std::size_t start = (s / traces.size()) * trace.packets() * traces.size() / services % trace.packets();
      ArrivalClock clock(config.rates[s], config.rate_epoch, config.duration, config.seed * 1000003 + s);
      streams_.push_back({std::move(packets), clock, start, 0});
      arrival_keys_.push_back(arrival_key(streams_.back().clock.next(), s));
      flow_base += static_cast<std::uint32_t>(trace.flows());
    }
    for (unsigned c = 0; c < cores_.size(); ++c) {
      const int owner = scheduler_->core_owner(c);
      cores_[c].last_service = owner == FlowScheduler::kSharedCore ? kNoService : static_cast<std::uint8_t>(owner);
    }
  }

  SimResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    for (;;) {
      std::int64_t earliest = arrival_keys_[0];
      for (std::size_t s = 1; s < arrival_keys_.size(); ++s) earliest = std::min(earliest, arrival_keys_[s]);
      if (earliest == kNoArrival) break;
      const Picos now = earliest >> 8;
      const auto service = static_cast<std::size_t>(earliest & 0xff);
      ServiceStream& stream = streams_[service];
      complete_until(now);
      while (now >= next_sample_) sample();
      arrive(stream, now);
      arrival_keys_[service] = arrival_key(stream.clock.next(), service);
    }
    complete_until(ArrivalClock::kNever);
    while (next_sample_ <= config_.duration) sample();
    result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    result_.cpu_s = thread_cpu_seconds() - cpu_start;
    result_.migrations = scheduler_->counters().migrations;
    result_.core_moves = scheduler_->counters().core_moves;
    return std::move(result_);
  }

 private:
  void arrive(ServiceStream& stream, Picos now) {
    const ServiceStream::Packet next = stream.packets[stream.cursor];
    if (++stream.cursor == stream.packets.size()) stream.cursor = 0;
    // The stream's following packet is several arrivals away (the services interleave): fetch its flow's
    // state now, so that the random access into the flow array is not paid then; the scheduler's
    // migration table is as large as the flows it moved (hundreds of thousands): the same for its entry.
    __builtin_prefetch(&flows_[stream.packets[stream.cursor].flow], 1);
    scheduler_->prefetch(stream.packets[stream.cursor].flow);
    const auto service = static_cast<std::uint8_t>(&stream - streams_.data());
    ++stream.arrivals_in_step;
    ++result_.offered;
    FlowState& flow = flows_[next.flow];
    const std::uint32_t seq = ++flow.arrived;

    const PacketRef packet{next.flow, flow.rss_hash, flow.crc16, service};
    const unsigned core = config_.migration_census ? core_with_census(packet, now) : scheduler_->core_for(packet, now);
    CoreState& state = cores_[core];
    const Descriptor descriptor{next.flow, seq, next.work_ps, service};
    if (!state.busy) {
      loads_.arrive(core);
      completions_.push(start(core, descriptor, now), core);
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

  // Puts the packet in service; returns when it completes.
  Picos start(unsigned core, const Descriptor& descriptor, Picos now) {
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
    return done;
  }

  void complete_until(Picos horizon) {
    while (!completions_.empty() && completions_.top_time() <= horizon) {
      const Picos now = completions_.top_time();
      const unsigned core = completions_.top_core();
      CoreState& state = cores_[core];
      deliver(state.serving);
      loads_.depart(core, now);
      state.busy = false;
      if (state.waiting == 0) {
        completions_.pop();
        continue;
      }
      const Descriptor next = rings_[ring_slot(core, state.head)];
      if (++state.head == config_.queue_capacity) state.head = 0;
      --state.waiting;
      completions_.replace_top(start(core, next, now), core);
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

  unsigned core_with_census(const PacketRef& packet, Picos now) {
    const std::uint64_t migrations_before = scheduler_->counters().migrations;
    const unsigned core = scheduler_->core_for(packet, now);
    if (scheduler_->counters().migrations != migrations_before) census(scheduler_->last_migration_source());
    return core;
  }

  // The distinct flows the core holds (queued or in service), and how many of them are aggressive.
  void census(unsigned core) {
    const CoreState& state = cores_[core];
    census_flows_.clear();
    if (state.busy) census_flows_.push_back(state.serving.flow);
    for (std::uint32_t i = 0; i < state.waiting; ++i) census_flows_.push_back(rings_[ring_slot(core, state.head + i)].flow);
    std::sort(census_flows_.begin(), census_flows_.end());
    census_flows_.erase(std::unique(census_flows_.begin(), census_flows_.end()), census_flows_.end());
    const auto aggressive = std::count_if(census_flows_.begin(), census_flows_.end(),
                                          [this](std::uint32_t flow) { return scheduler_->aggressive(flow); });
    ++result_.flows_at_migration[census_flows_.size()];
    ++result_.aggressive_at_migration[static_cast<std::size_t>(aggressive)];
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
    // position < 2 x capacity (head and waiting are both below it): one compare instead of a division.
    if (position >= config_.queue_capacity) position -= config_.queue_capacity;
    return static_cast<std::size_t>(core) * config_.queue_capacity + position;
  }

  const SimConfig& config_;
  CoreLoads loads_;
  std::unique_ptr<FlowScheduler> scheduler_;
  std::vector<CoreState> cores_;
  std::vector<Descriptor> rings_;  // per core, queue_capacity descriptors
  CompletionHeap completions_;
  std::vector<ServiceStream> streams_;
  std::vector<std::int64_t> arrival_keys_;  // per service: arrival_key() of its next arrival
  std::vector<FlowState> flows_;
  std::vector<std::uint32_t> census_flows_;  // scratch of census(), queue capacity + 1 reserved
  Picos next_sample_;
  SimResult result_;
};

}  // namespace

SimResult simulate(const SimConfig& config, std::span<const HeaderTrace> traces, std::string_view policy) {
  check(config, traces);
  return Simulation(config, traces, policy).run();
}

}  // namespace flowtrack
