#include "flowtrack/runtime/live_service.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <variant>

#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/control_request.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/route_announcement.hpp"
#include "flowtrack/runtime/control_socket.hpp"
#include "flowtrack/runtime/dpdk_port_group.hpp"
#include "flowtrack/runtime/dpdk_ports.hpp"
#include "flowtrack/runtime/dpdk_threads.hpp"
#include "flowtrack/runtime/engine.hpp"
#include "flowtrack/runtime/hand_over.hpp"
#include "flowtrack/runtime/health_checker.hpp"
#include "flowtrack/runtime/live_functions.hpp"
#include "flowtrack/runtime/metrics_server.hpp"
#include "flowtrack/runtime/lb_peers.hpp"
#include "flowtrack/runtime/nat_pair.hpp"
#include "flowtrack/runtime/port_block_journal_writer.hpp"
#include "flowtrack/runtime/prometheus_text.hpp"
#include "flowtrack/runtime/route_announcer.hpp"
#include "flowtrack/runtime/scheduled_source.hpp"
#include "flowtrack/runtime/state_store.hpp"
#include "flowtrack/runtime/telemetry_counters.hpp"
#include "flowtrack/io/dpdk_eal_start.hpp"

namespace flowtrack {
namespace {

constexpr Nanos kPublishEvery = 100 * kNanosPerMilli;
// How long the control plane waits for every worker to take a pool change before it answers: a worker
// between two polls takes it within a burst; one the system does not schedule takes it when it next polls.
constexpr Nanos kChangeWait = 2 * kNanosPerSecond;
// How long it waits for the workers' copies of their counters: a tick, and some.
constexpr Nanos kPublishWait = 2 * DpdkPorts::kTick;

// What the function owns (ARP is answered for it) and the next hops worth resolving before traffic.
struct FunctionAddresses {
  std::vector<std::uint32_t> owned, next_hops;
};

// The hosts the restored connections answer to (an LB's clients, a NAT's inside hosts), added to the
// next hops resolved as the function starts, as its backends are: the answers of the connections it
// goes on with then find their MAC addresses known, instead of waiting for the host to be asked (or to
// ask) after a restart or a takeover. The ports keep one entry per next hop (DpdkPorts).
void add_restored_hosts(std::vector<std::uint32_t>& next_hops, std::span<const LbSnapshot> restored) {
  for (const LbSnapshot& s : restored) {
    for (const LbSnapshot::Connection& c : s.connections) next_hops.push_back(c.connection.original.src_addr);
  }
}
void add_restored_hosts(std::vector<std::uint32_t>& next_hops, std::span<const NatSnapshot> restored) {
  for (const NatSnapshot& s : restored) {
    for (const NatSnapshot::Mapping& m : s.mappings) next_hops.push_back(m.inside_addr);
  }
}

FunctionAddresses addresses_of(const std::vector<ServiceConfig>& services) {
  FunctionAddresses a;
  for (const ServiceConfig& s : services) {
    a.owned.push_back(s.vip);
    for (const BackendConfig& b : s.backends) a.next_hops.push_back(b.address);
  }
  return a;
}

// What each function knows of its own, for the counters.
void add_function_state(const Forwarder&, LiveCounters&) {}
void add_function_state(const StatelessLb& nf, LiveCounters& s) { s.traffic += lb_stats(nf.services()); }
template <class Table, class Aging, class Events>
void add_function_state(const Nat44<Table, Aging, Events>& nf, LiveCounters& s) {
  s.connections_live = nf.sessions().size();
}
void add_function_state(const LiveLb& nf, LiveCounters& s) {
  s.connections_live = nf.tracker().size();
  for (const Service& service : nf.services()) {
    for (const Backend& b : service.backends()) {
      s.backends[b.config.name] += b.total_connections;
      auto& phases = s.backend_connections[b.config.name];
      for (std::size_t phase = 0; phase < kConnectionPhaseCount; ++phase) phases[phase] += b.by_phase[phase];
    }
  }
  s.traffic += lb_stats(nf.services());
  s.over_rate = nf.stats().over_rate;
}
void add_function_state(const ConcuryLb& nf, LiveCounters& s) {
  s.connections_live = nf.known_connections();
  for (std::uint32_t service = 0; service < nf.services().size(); ++service) {
    const std::vector<Backend>& pool = nf.services()[service].backends();
    for (std::size_t b = 0; b < pool.size(); ++b) {
      s.backends[pool[b].config.name] += nf.new_connections(service, static_cast<std::uint16_t>(b));
    }
  }
  s.traffic += lb_stats(nf.services(), [&](std::uint32_t service, std::uint32_t b) {
    return nf.new_connections(service, static_cast<std::uint16_t>(b));
  });
}

template <class Nf>
LiveCounters state_of(const Nf& nf, std::string_view name, const DpdkPorts& ports, const WorkerCounters& loop) {
  LiveCounters s;
  const PortCounters& p = ports.counters();
  s.nf = name;
  s.packets_in = p.rx;
  s.packets_to_function = p.to_function;
  s.packets_out = p.tx;
  s.arp_answered = p.arp_answered;
  s.arp_asked = p.arp_asked;
  s.handed_off = p.handed_off;
  s.handoff_backoffs = p.handoff_backoffs;
  for (std::size_t r = 0; r < kParseStatusCount; ++r) {  // the ports parse (a ParsingSource): the loop's stay 0
    const std::uint64_t n = loop.parse_drops[r] + p.parse_drops[r];
    if (n != 0) s.drops[std::string(parse_status_name(static_cast<ParseStatus>(r)))] += n;
  }
  const NfCounters c = nf.counters();
  for (std::size_t d = 0; d < kNfDropCount; ++d) {
    if (c.drops[d] != 0) s.drops[std::string(nf_drop_name(static_cast<NfDrop>(d)))] += c.drops[d];
  }
  for (std::size_t d = 0; d < kPortDropCount; ++d) {
    if (p.drops[d] != 0) s.drops[std::string(port_drop_name(static_cast<PortDrop>(d)))] += p.drops[d];
  }
  s.connections = c.connections_created;
  add_function_state(nf, s);
  return s;
}

// What a pool change must pass before it is posted: the configured pool with every change made so far.
class PoolChangeRules {
 public:
  PoolChangeRules(NfKind nf, std::vector<ServiceConfig> services, std::uint32_t maglev_size)
      : nf_(nf), services_(std::move(services)), maglev_size_(maglev_size) {}

  // The problem with `change`, or nullopt once it is recorded as made.
  std::optional<std::string> admit(const PoolChange& change) {
    applied_.push_back(change);
    std::optional<std::string> problem;
    if (const auto p = check_pool_changes(applied_, services_, maglev_size_)) {
      problem = fmt::format("{}: {}", p->key, p->problem);
    } else if (nf_ == NfKind::concury) {
      if (const auto beyond = ConcuryLb::listing_beyond(applied_, services_)) {
        problem = fmt::format("backend: its service would have listed {} backends, at most {}", beyond->second,
                              std::size_t{1} << ConcuryLb::kDcodeBits);
      }
    }
    if (problem) applied_.pop_back();
    return problem;
  }

  // The pool the changes start from, and the changes made, in their order.
  const std::vector<ServiceConfig>& services() const { return services_; }
  const std::vector<PoolChange>& applied() const { return applied_; }

 private:
  NfKind nf_;
  std::vector<ServiceConfig> services_;
  std::uint32_t maglev_size_;
  std::vector<PoolChange> applied_;
};

// What the health checks say, into the counters.
void add_health(const HealthSnapshot& snapshot, LiveCounters& counters) {
  for (std::size_t t = 0; t < snapshot.targets.size(); ++t) {
    const TargetHealth& h = snapshot.health[t];
    counters.backend_health[snapshot.targets[t].service + "/" + snapshot.targets[t].backend] = {h.up, h.probes, h.failures, h.transitions};
  }
  for (const ServiceHealth& s : snapshot.services) counters.all_down_events[s.name] = s.all_down_events;
}

// New connections a second per VIP and per backend, over at least a second between two readings.
class ConnectionRates {
 public:
  // Sets the counters' rates: new ones once a second has passed since the last, else the last ones.
  void update(LiveCounters& counters, Nanos now) {
    if (now - since_ >= kNanosPerSecond) {
      vip_rate_ = per_second(counters.traffic.vips, base_.vips, now - since_);
      backend_rate_ = per_second(counters.traffic.backends, base_.backends, now - since_);
      base_ = counters.traffic;
      since_ = now;
    }
    counters.vip_rate = vip_rate_;
    counters.backend_rate = backend_rate_;
  }

 private:
  static std::map<std::string, std::uint64_t> per_second(const std::map<std::string, LbTraffic>& now,
                                                         const std::map<std::string, LbTraffic>& before, Nanos interval) {
    std::map<std::string, std::uint64_t> rates;
    for (const auto& [name, t] : now) {
      const auto it = before.find(name);
      const std::uint64_t given = t.connections - (it == before.end() ? 0 : it->second.connections);
      rates[name] = static_cast<std::uint64_t>(static_cast<double>(given) * 1e9 / static_cast<double>(interval) + 0.5);
    }
    return rates;
  }

  LbStats base_;
  Nanos since_ = DpdkPorts::now();
  std::map<std::string, std::uint64_t> vip_rate_, backend_rate_;
};

// The control plane's work, on its own thread, until the run stops.
class ControlPlane {
 public:
  // `tick`: more work of the control plane's, done at every publish (the NAT's block log).
  // `pair`: a NAT pair's figures (none: no pair). `announcer`: the routing speaker's (none: no
  // [dataplane.announce]). `snapshot_task(w)`: the task that leaves worker w's snapshot on request;
  // `save_state`: once every worker has run it, writes the state file and says what it wrote (both none:
  // the run keeps no state file). `pause`: the workers' pause for a hand-over, and `handed_over`, told
  // when one is committed (hand_over.hpp; none without a state file). `socket` is read once the workers
  // have started (a run taking over opens its socket once it has the state).
  ControlPlane(std::string nf_name, Engine& engine, std::vector<CounterBoard>& published, ControlSocket* const& socket,
               std::optional<PoolChangeRules> rules, const HealthChecker* health, const PairBoard* pair, RouteAnnouncer* announcer,
               const DataplaneConfig& plane, LiveObserver& observer, std::function<void()> tick,
               std::function<WorkerTask(unsigned)> snapshot_task, std::function<std::string()> save_state, WorkerPause* pause,
               std::function<void()> handed_over)
      : nf_name_(std::move(nf_name)), engine_(engine), published_(published), socket_(socket), rules_(std::move(rules)),
        health_(health), pair_(pair), announcer_(announcer), plane_(plane), observer_(observer), tick_(std::move(tick)),
        snapshot_task_(std::move(snapshot_task)), save_state_(std::move(save_state)), pause_(pause),
        handed_over_(std::move(handed_over)) {}

  // Serves until `stop` (a signal) or `ctl stop`; then withdraws the VIPs and, once the data plane has
  // served on for the announcement's linger (what the router sent before it took the withdrawal), stops it.
  void run(const std::atomic<bool>& stop) {
    const Nanos start = DpdkPorts::now();
    Nanos next_publish = start, next_stats = start + plane_.stats_interval;
    LiveCounters last;
    while (!stop.load(std::memory_order_relaxed) && !stop_requested_ && !engine_.stopping()) {
      const Nanos now = DpdkPorts::now();
      if (pause_ != nullptr && pause_->paused() && now >= resume_at_) {
        pause_->resume();
        observer_.state("hand-over: no commit within the patience: forwarding again");
      }
      // Paused workers publish nothing: their last copies stand.
      if (now >= next_publish && (pause_ == nullptr || !pause_->paused())) {
        publish();
        announce();
        if (tick_) tick_();
        next_publish = now + kPublishEvery;
      }
      if (now >= next_stats) {
        const LiveCounters s = live_counter_board().read();
        observer_.stats(s, last, now - next_stats + plane_.stats_interval, now - start);
        last = s;
        next_stats = now + plane_.stats_interval;
      }
      const Nanos wake = std::min(next_publish, next_stats);
      const auto wait = std::chrono::milliseconds(wake > now ? (wake - now) / kNanosPerMilli : 0);
      if (socket_ != nullptr) {
        socket_->serve(wait, [&](std::string_view line) { return answer(line); });
      } else {
        std::this_thread::sleep_for(std::min(wait, std::chrono::milliseconds(10)));
      }
    }
    if (announcer_ != nullptr) {
      announcer_->publish({});
      if (!engine_.stopping()) std::this_thread::sleep_for(std::chrono::nanoseconds(announcer_->config().linger));
    }
    engine_.stop();
    if (pause_ != nullptr) pause_->resume();  // stopped while paused: the workers go on to their stop
  }

 private:
  // Posts `message` to every worker; waits until each has taken it or `patience` has passed. Returns the
  // workers that had not.
  std::vector<unsigned> post_to_all(const WorkerMessage& message, Nanos patience) {
    return post_to_each([&](unsigned) { return message; }, patience);
  }
  // The same with worker w's own message, message_of(w).
  std::vector<unsigned> post_to_each(const std::function<WorkerMessage(unsigned)>& message_of, Nanos patience) {
    std::vector<std::uint64_t> wait_for(engine_.workers());
    for (unsigned w = 0; w < engine_.workers(); ++w) wait_for[w] = engine_.mailbox(w).post(message_of(w));
    const Nanos give_up = DpdkPorts::now() + patience;
    std::vector<unsigned> late;
    for (unsigned w = 0; w < engine_.workers(); ++w) {
      while (engine_.mailbox(w).taken() < wait_for[w] && DpdkPorts::now() < give_up && !engine_.stopping()) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      if (engine_.mailbox(w).taken() < wait_for[w]) late.push_back(w);
    }
    return late;
  }

  // Fresh copies of every worker's counters (a late worker's last copy stands in), summed and published.
  void publish() {
    post_to_all(PublishRequest{}, kPublishWait);
    LiveCounters sum;
    sum.nf = nf_name_;
    for (const CounterBoard& p : published_) sum += p.read();
    if (health_ != nullptr) add_health(health_->snapshot(), sum);
    if (pair_ != nullptr) sum.pair = pair_->read();
    rates_.update(sum, DpdkPorts::now());
    live_counter_board().publish(sum);
  }

  // What the routing speaker should announce now: nothing while the instance is drained as a whole, else
  // the VIPs with a backend that takes new connections and is not down by its health checks.
  void announce() {
    if (announcer_ == nullptr) return;
    std::vector<std::uint32_t> vips;
    if (!drained_ && rules_) {
      UnhealthyBackends unhealthy;
      if (health_ != nullptr) {
        const HealthSnapshot snapshot = health_->snapshot();
        for (std::size_t t = 0; t < snapshot.targets.size(); ++t) {
          if (!snapshot.health[t].up) unhealthy.emplace(snapshot.targets[t].service, snapshot.targets[t].backend);
        }
      }
      vips = vips_with_a_healthy_backend(rules_->services(), rules_->applied(), unhealthy);
    }
    announcer_->publish(vips);
  }

  std::string drain_instance(bool drained) {
    if (announcer_ == nullptr) return "error: this instance announces no VIPs (no [dataplane.announce])";
    drained_ = drained;
    announce();
    return drained ? "ok: every VIP withdrawn" : "ok: the VIPs with a healthy backend announced";
  }

  std::string answer(std::string_view line) {
    const auto parsed = parse_control_request(line);
    if (const auto* error = std::get_if<std::string>(&parsed)) return "error: " + *error;
    const ControlRequest& request = std::get<ControlRequest>(parsed);
    if (request.kind == ControlRequest::Kind::counters) {
      publish();
      return live_counters_json(live_counter_board().read());
    }
    if (request.kind == ControlRequest::Kind::drain_instance || request.kind == ControlRequest::Kind::undrain_instance) {
      return drain_instance(request.kind == ControlRequest::Kind::drain_instance);
    }
    if (request.kind == ControlRequest::Kind::stop) {
      stop_requested_ = true;
      return "ok: stopping";
    }
    if (request.kind == ControlRequest::Kind::takeover) {
      return pair_ != nullptr ? "error: this NAT is its pair's active already" : fmt::format("error: nf {} runs no pair to take over in", nf_name_);
    }
    if (request.kind == ControlRequest::Kind::save_state) return save_state();
    if (request.kind == ControlRequest::Kind::hand_over) return hand_over();
    if (request.kind == ControlRequest::Kind::hand_over_commit) return commit_hand_over();
    if (request.kind == ControlRequest::Kind::hand_over_abort) {
      if (pause_ == nullptr || !pause_->paused()) return "error: no hand-over under way";
      pause_->resume();
      observer_.state("hand-over: aborted by the new process: forwarding again");
      return "ok: forwarding again";
    }
    if (!rules_) return fmt::format("error: nf {} has no backend pool to change (slb, lb and concury have)", nf_name_);
    if (const auto problem = rules_->admit(request.change)) return "error: " + *problem;
    const std::vector<unsigned> late = post_to_all(request.change, kChangeWait);
    if (late.empty()) return "ok";
    return fmt::format("ok (worker(s) {} take it when they next poll)", fmt::join(late, ", "));
  }

  // Every worker's snapshot, taken between two of its bursts, then the file written whole (a worker that
  // does not answer in time leaves the file as it was).
  std::string save_state() {
    if (!save_state_) return fmt::format("error: nf {} keeps no state file here (nat and lb, run with --state FILE)", nf_name_);
    const std::vector<unsigned> late = post_to_each(snapshot_task_, kChangeWait);
    if (!late.empty()) return fmt::format("error: worker(s) {} did not leave their state in time: nothing written", fmt::join(late, ", "));
    try {
      return "ok: " + save_state_();
    } catch (const std::exception& e) {
      return fmt::format("error: {}", e.what());
    }
  }

  // Every worker paused after leaving its snapshot, then the file written: the new process's to take
  // (hand_over.hpp). Any failure resumes the workers at once.
  std::string hand_over() {
    if (!save_state_ || pause_ == nullptr) return save_state();  // its refusal: no state file here
    if (pause_->paused()) return "error: a hand-over is under way already";
    pause_->begin(engine_.workers());
    for (unsigned w = 0; w < engine_.workers(); ++w) engine_.mailbox(w).post(pause_->task(snapshot_task_(w).run));
    if (!pause_->wait_paused(kChangeWait, [&] { return engine_.stopping(); })) {
      pause_->resume();
      return "error: the workers did not pause in time: forwarding on, nothing written";
    }
    try {
      const std::string written = save_state_();
      resume_at_ = DpdkPorts::now() + kHandOverPatience;
      observer_.state("hand-over: paused, " + written);
      return "ok: paused; " + written;
    } catch (const std::exception& e) {
      pause_->resume();
      return fmt::format("error: {}: forwarding on", e.what());
    }
  }

  // The paused run ends, forwarding nothing more and writing no state: its successor has it.
  std::string commit_hand_over() {
    if (pause_ == nullptr || !pause_->paused()) {
      return "error: no hand-over under way (none asked for, or no commit came in time: forwarding again)";
    }
    handed_over_();
    pause_->supersede();
    engine_.stop();
    stop_requested_ = true;
    pause_->resume();
    observer_.state("hand-over: committed: stopping");
    return "ok: handed over, stopping";
  }

  std::string nf_name_;
  Engine& engine_;
  std::vector<CounterBoard>& published_;
  ControlSocket* const& socket_;
  std::optional<PoolChangeRules> rules_;
  const HealthChecker* health_;  // none when no service is checked
  const PairBoard* pair_;
  RouteAnnouncer* announcer_;  // none when the instance announces nothing
  bool drained_ = false;         // `ctl drain-instance`: every VIP withdrawn until `undrain-instance`
  bool stop_requested_ = false;  // `ctl stop`
  ConnectionRates rates_;
  const DataplaneConfig& plane_;
  LiveObserver& observer_;
  std::function<void()> tick_;
  std::function<WorkerTask(unsigned)> snapshot_task_;
  std::function<std::string()> save_state_;
  WorkerPause* pause_;
  std::function<void()> handed_over_;
  Nanos resume_at_ = 0;  // a paused run forwards again from then on
};

// Everything a run of function Nf needs besides its instances.
struct LiveSetup {
  const LiveServiceOptions& options;
  DpdkPortGroup& group;
  FunctionAddresses addresses;
  ControlSocket* socket;
  std::optional<PoolChangeRules> rules;
  PoolChangeSchedule schedule;
  std::span<const ServiceConfig> checked;  // the services, when any of them has health checks
  RouteAnnouncer* announcer = nullptr;     // none: no [dataplane.announce]
  // A NAT pair's active: its figures, its sync link (on a thread beside the workers; an LB's link to its
  // peers too), and whether worker 0 announces the function's addresses (gratuitous ARP) as it starts.
  const PairBoard* pair = nullptr;
  std::function<void(Engine&, const std::atomic<bool>&)> link;
  bool announce = false;
  // A run that took over from a running process: what its ports received before it had the state is
  // discarded (the running process forwarded it, or lost it in the hand-over's pause).
  bool discard_received = false;
};

// What a function that keeps state (the NAT, the stateful LB) does around its workers' service: on each
// worker once its instance is built, before it serves (restore, attach the block log), once it has
// stopped (its snapshot), and between two bursts when `ctl save-state` asks (its snapshot: requested);
// on the control plane's thread at every publish (the block log written), once every worker has left
// its snapshot on request (save_requested: the state file written; it says what it wrote), and once
// every worker has ended, told whether all of them served (the state file written); on the control
// plane's thread when a hand-over is committed (handed_over: the state is the new process's now).
template <class Nf>
struct StateHooks {
  std::function<void(unsigned, Nf&, Nanos)> started;
  std::function<void(unsigned, const Nf&, Nanos)> stopped, requested;
  std::function<void()> tick;
  std::function<std::string()> save_requested;
  std::function<void(bool)> finished;
  std::function<void()> handed_over;
};

std::size_t connections_in(const NatSnapshot& s) { return s.sessions.size(); }
std::size_t connections_in(const LbSnapshot& s) { return s.connections.size(); }

// A function's state across a restart (state_store.hpp): the snapshots its workers start from, and
// those they leave when they stop, written to the state file once all of them have. A run stopped
// during its start (no worker served, nothing changed) puts the file it took back where it was.
template <class Snapshot>
class KeptState {
 public:
  using Save = std::function<void(std::span<const Snapshot>)>;
  KeptState(StateFileOptions options, StartingState<Snapshot> start, unsigned workers)
      : options_(std::move(options)), restored_(std::move(start.workers)), saved_(workers), requested_(workers),
        note_(std::move(start.note)) {}

  const std::string& note() const { return note_; }
  const std::vector<Snapshot>& restored() const { return restored_; }

  template <class Nf>
  StateHooks<Nf> hooks(Save save) {
    StateHooks<Nf> h;
    h.started = [this](unsigned w, Nf& nf, Nanos now) {
      if (restored_.empty()) return;
      nf.restore(restored_[w], now);
      restored_[w] = {};  // its memory back: worker w's own element, never read again
    };
    h.stopped = [this](unsigned w, const Nf& nf, Nanos now) {
      if (!options_.path.empty() && !handed_over_.load(std::memory_order_acquire)) saved_[w] = nf.snapshot(now);
    };
    if (!options_.path.empty()) {  // without a file, `ctl save-state` and `ctl hand-over` are refused
      h.requested = [this](unsigned w, const Nf& nf, Nanos now) { requested_[w] = nf.snapshot(now); };
      h.handed_over = [this] { handed_over_.store(true, std::memory_order_release); };
      h.save_requested = [this, save] {
        std::size_t connections = 0;
        for (const Snapshot& s : requested_) connections += connections_in(s);
        save(requested_);
        std::ranges::fill(requested_, Snapshot{});  // their memory back until the next request
        return fmt::format("state of {} connections written to {}", connections, options_.path);
      };
    }
    h.finished = [this, save = std::move(save)](bool served) {
      if (options_.path.empty() || handed_over_.load(std::memory_order_acquire)) return;
      if (served) {
        save(saved_);
      } else if (!restored_.empty() && std::rename((options_.path + ".restored").c_str(), options_.path.c_str()) != 0) {
        throw std::runtime_error(fmt::format("state file {}.restored: cannot put it back: {}", options_.path, std::strerror(errno)));
      }
    };
    return h;
  }

 private:
  StateFileOptions options_;
  std::vector<Snapshot> restored_;  // by worker, until it has restored its own; none: the run starts empty
  std::vector<Snapshot> saved_;     // by worker, as each stops
  // By worker, as each leaves it on request: written by worker w between two of its bursts, read by the
  // control plane once every worker has taken the request (the mailbox's acquire).
  std::vector<Snapshot> requested_;
  std::string note_;
  std::atomic<bool> handed_over_{false};  // the state written for a new process: not written again at the stop
};

// The NAT's port-block log (nf/port_block_log.hpp) in a live run: a ring per worker, attached to its
// instance before it serves, with room for two records per block of its slices (so a held block always
// has room for its release), emptied into the journal (port_block_journal_writer.hpp) by the control
// plane at every publish and once more when the workers have stopped. None without block_size, or
// with neither block_log nor block_log_syslog.
class BlockJournal {
 public:
  BlockJournal(const NatConfig& config, unsigned workers) : logs_(workers) {
    if (config.block_size != 0 && (!config.block_log.empty() || config.block_log_syslog)) {
      writer_.emplace(config.block_log, config.block_log_syslog, unix_now_ns() - DpdkPorts::now());
    }
  }

  // On worker w's thread, before it serves (the control plane reads logs_ only once every worker has).
  template <class Nat>
  void attach(unsigned w, Nat& nat) {
    if (!writer_) return;
    logs_[w] = std::make_unique<PortBlockLog>(std::max<std::size_t>(2 * nat.block_count(), kMinBlockLog));
    if (!nat.attach_block_log(logs_[w].get())) throw std::logic_error("nat block log: no room for the release of the blocks held");
  }
  // On the control plane's thread: every record waiting, written.
  void write() {
    if (!writer_) return;
    for (const std::unique_ptr<PortBlockLog>& log : logs_) {
      if (log) writer_->drain(*log);
    }
  }

 private:
  static constexpr std::size_t kMinBlockLog = 1024;
  std::optional<PortBlockJournalWriter> writer_;
  std::vector<std::unique_ptr<PortBlockLog>> logs_;
};

// The workers of function Nf, each made by make(worker), and the control plane beside them.
template <class Make, class Nf = typename std::invoke_result_t<Make&, unsigned>::element_type>
LiveReport serve(LiveSetup& setup, Make&& make, const std::atomic<bool>& stop, LiveObserver& observer, StateHooks<Nf> hooks = {}) {
  const LiveServiceOptions& o = setup.options;
  const std::string name(nf_kind_name(o.nf));
  Engine engine({.workers = o.workers,
                 .burst = o.burst,
                 .pin = PinPolicy::on_cpus(eal_lcore_cpus()),
                 .on_worker_start = [](unsigned) { register_with_eal(); }});
  std::vector<CounterBoard> published(o.workers);
  WorkerPause pause;
  std::atomic<std::uint64_t> discarded{0};
  // Each worker's instance while it serves (set before it passes the gate): what a snapshot task reads.
  std::vector<Nf*> instances(o.workers, nullptr);
  const auto worker = [&](unsigned w, StartGate& gate) {
    if (stop.load(std::memory_order_relaxed)) {  // stopped during the start: no instance built, none served
      gate.leave();
      unregister_from_eal();
      return;
    }
    auto nf = make(w);
    if (hooks.started) hooks.started(w, *nf, DpdkPorts::now());
    if (setup.discard_received) discarded += setup.group.discard_received(w);
    DpdkPorts ports(setup.group, w, setup.addresses.owned, setup.addresses.next_hops);
    ports.watch(engine.mailbox(w).pending());
    ports.mute_when(pause.superseded());
    if (setup.announce && w == 0) ports.announce();
    ScheduledSource source(ports, setup.schedule, engine.mailbox(w));
    published[w].publish(state_of(*nf, name, ports, engine.counters(w)));
    instances[w] = nf.get();
    gate.pass();
    if (!stop.load(std::memory_order_relaxed)) {
      engine.serve(w, *nf, source, ports,
                   [&](const WorkerCounters& counters) { published[w].publish(state_of(*nf, name, ports, counters)); });
    }
    ports.close();
    published[w].publish(state_of(*nf, name, ports, engine.counters(w)));
    if (hooks.stopped) hooks.stopped(w, *nf, DpdkPorts::now());
    unregister_from_eal();
  };
  // The health checks' transitions go to every worker as pool changes, posted from the checks' thread
  // without waiting: down and up only mark a backend, so they need no check against the changes made.
  std::optional<HealthChecker> health;
  if (!setup.checked.empty()) {
    health.emplace(setup.checked, [&engine](const PoolChange& change) {
      for (unsigned w = 0; w < engine.workers(); ++w) engine.mailbox(w).post(change);
    });
  }
  // Run by worker w between two of its bursts, so only while it serves: its instance is there.
  std::function<WorkerTask(unsigned)> snapshot_task;
  if (hooks.requested) {
    snapshot_task = [&](unsigned w) { return WorkerTask{[&, w] { hooks.requested(w, *instances[w], DpdkPorts::now()); }}; };
  }
  ControlPlane control(name, engine, published, setup.socket, std::move(setup.rules), health ? &*health : nullptr, setup.pair,
                       setup.announcer, o.plane, observer, hooks.tick, snapshot_task, hooks.save_requested,
                       hooks.handed_over ? &pause : nullptr, hooks.handed_over);
  bool stopped_during_start = false;
  std::vector<std::function<void(StartGate&)>> beside = {[&](StartGate& gate) {
    unpin_current_thread();  // the thread that started the EAL is pinned to its main lcore; this one sleeps in poll()
    gate.pass();  // every worker has built its instance (or, stopped, skipped it)
    stopped_during_start = stop.load(std::memory_order_relaxed);
    if (setup.discard_received) {
      observer.state(fmt::format("take-over: {} frames the ports received before the state was here discarded", discarded.load()));
    }
    control.run(stop);
  }};
  if (setup.link) {
    beside.push_back([&](StartGate& gate) {
      unpin_current_thread();  // as the control plane's: it sleeps in poll()
      gate.pass();
      setup.link(engine, stop);
    });
  }
  const Nanos start = DpdkPorts::now();
  engine.run(worker, beside);
  if (hooks.finished) hooks.finished(!stopped_during_start);
  LiveReport report;
  report.seconds = static_cast<double>(DpdkPorts::now() - start) / 1e9;
  report.workers = o.workers;
  report.stopped_during_start = stopped_during_start;
  for (const CounterBoard& p : published) report.counters += p.read();
  if (health) add_health(health->snapshot(), report.counters);
  report.counters.nf = name;
  live_counter_board().publish(report.counters);
  report.mbufs_missing = setup.group.close();
  return report;
}

// A NAT of a pair (runtime/nat_pair.hpp): stands by until it takes over, then serves as the active, its
// workers started from the standby's copy and its sync link beside them. `unstarted`: the report of a
// run stopped while it stood by (nothing forwarded).
LiveReport serve_nat_pair(LiveSetup& setup, const SyncKey& key, SyncSocket& socket, const std::atomic<bool>& stop, LiveObserver& observer,
                          LiveReport unstarted) {
  const LiveServiceOptions& o = setup.options;
  const PairConfig& config = *o.plane.pair;
  PairBoard board;
  // The workers' NATs, their tables allocated while standing by: a takeover then restores the copy into
  // them and starts the workers. Built on this thread, not each on its worker's (their memory is first
  // touched here). Their timer wheels start now and jump the idle time at their first expiry.
  const Nanos built = DpdkPorts::now();
  std::vector<std::unique_ptr<LivePairedNat>> paired_nats;
  std::vector<std::unique_ptr<LiveNat>> nats;
  for (unsigned w = 0; w < o.workers; ++w) {
    if (config.sync) {
      paired_nats.push_back(std::make_unique<LivePairedNat>(o.nat, w, o.workers, built));
    } else {
      nats.push_back(std::make_unique<LiveNat>(o.nat, w, o.workers, built));
    }
  }
  observer.pair(fmt::format("pair: standing by (role {}), sync {}", config.role == PairConfig::Role::active ? "active" : "standby",
                            config.sync ? "on" : "off (heartbeats only)"));
  std::optional<Takeover> takeover =
      stand_by(config, key, o.workers, o.nat.port_quarantine, socket, setup.socket, live_counter_board(), board, stop);
  if (!takeover) {
    unstarted.counters.pair = board.read();
    unstarted.mbufs_missing = setup.group.close();
    return unstarted;
  }
  observer.pair(fmt::format("pair: taking over: {}; {} connections in the standby's copy", takeover->reason, takeover->sessions));
  ActiveSyncLink link(config, key, socket, o.workers, board, takeover->figures);
  setup.pair = &board;
  setup.announce = true;
  add_restored_hosts(setup.addresses.next_hops, takeover->workers);
  setup.link = [&link](Engine& engine, const std::atomic<bool>& until) { link.run(engine, until); };
  // How long the takeover took: from the decision to the last worker's NAT ready to serve.
  std::atomic<Nanos> ready{takeover->decided};
  // Each worker's NAT, fresh, takes what of the copy fits it (a copy may lag its active's state).
  const auto restore = [&](unsigned w, auto& nat, Nanos at) {
    nat.restore(takeover->workers[w], at, RestoreMode::what_fits);
    takeover->workers[w] = {};  // its memory back: worker w's own element, never read again
    Nanos seen = ready.load(std::memory_order_relaxed);
    const Nanos done = DpdkPorts::now();
    while (seen < done && !ready.compare_exchange_weak(seen, done, std::memory_order_relaxed)) {
    }
  };
  LiveReport report;
  if (config.sync) {
    StateHooks<LivePairedNat> hooks;
    hooks.started = [&](unsigned w, LivePairedNat& nat, Nanos at) {
      restore(w, nat, at);
      link.attach(w, nat);
    };
    hooks.stopped = [&](unsigned w, const LivePairedNat&, Nanos) { link.detach(w); };
    report = serve(setup, [&](unsigned w) { return std::move(paired_nats[w]); }, stop, observer, std::move(hooks));
  } else {
    StateHooks<LiveNat> hooks;
    hooks.started = [&](unsigned w, LiveNat& nat, Nanos at) { restore(w, nat, at); };
    report = serve(setup, [&](unsigned w) { return std::move(nats[w]); }, stop, observer, std::move(hooks));
  }
  if (!report.stopped_during_start) {
    observer.pair(fmt::format("pair: took over in {:.1f} ms (the copy restored into its workers' NATs)",
                              static_cast<double>(ready.load() - takeover->decided) / static_cast<double>(kNanosPerMilli)));
  }
  if (!link.stepped_down().empty()) observer.pair("pair: " + link.stepped_down());
  report.counters.pair = board.read();
  live_counter_board().publish(report.counters);
  return report;
}

PacketOwner owner_of(const LiveServiceOptions& o, const FunctionAddresses& addresses) {
  switch (o.nf) {
    case NfKind::fwd:
    case NfKind::slb: return PacketOwner::spread(o.workers);
    case NfKind::lb:
    case NfKind::concury: return PacketOwner::lb_client(o.workers, addresses.owned);
    case NfKind::nat: return PacketOwner::nat(o.workers, o.nat);
  }
  return PacketOwner::spread(o.workers);
}

FunctionAddresses addresses_of(const LiveServiceOptions& o) {
  switch (o.nf) {
    case NfKind::fwd: return {};
    case NfKind::slb: return addresses_of(o.slb.services);
    case NfKind::lb:
    case NfKind::concury: return addresses_of(o.lb.services);
    case NfKind::nat: return {o.nat.pool, {}};
  }
  return {};
}

// The services with the backends a restored LB has (every worker's pool is the same): those not removed,
// as they were when the state was saved. The pool that the control socket's changes start from.
std::vector<ServiceConfig> pool_as_restored(std::vector<ServiceConfig> services, const std::vector<LbSnapshot>& restored) {
  if (restored.empty()) return services;
  for (std::size_t i = 0; i < services.size() && i < restored[0].services.size(); ++i) {
    services[i].backends.clear();
    for (const LbSnapshot::Backend& b : restored[0].services[i].backends) {
      if (!b.removed) services[i].backends.push_back({b.name, b.address, b.port, b.weight});
    }
  }
  return services;
}

std::optional<PoolChangeRules> change_rules_of(const LiveServiceOptions& o, const std::vector<LbSnapshot>& restored) {
  switch (o.nf) {
    case NfKind::slb: return PoolChangeRules(o.nf, o.slb.services, o.slb.maglev_size);
    case NfKind::lb: return PoolChangeRules(o.nf, pool_as_restored(o.lb.services, restored), o.lb.maglev_size);
    case NfKind::concury: return PoolChangeRules(o.nf, o.lb.services, o.lb.maglev_size);
    case NfKind::fwd:
    case NfKind::nat: return std::nullopt;
  }
  return std::nullopt;
}

// What a run taking over from a running process needs, and what it cannot take over yet.
void check_take_over(const LiveServiceOptions& o) {
  if (o.nf != NfKind::nat && o.nf != NfKind::lb) throw std::runtime_error("--take-over hands over a live nat's or lb's state");
  if (o.state.path.empty() || o.state.start_empty) {
    throw std::runtime_error("--take-over takes the state through --state FILE (the running process's), without --start-empty");
  }
  if (o.plane.control_socket.empty()) {
    throw std::runtime_error("--take-over asks the running process on [dataplane] control_socket: none configured");
  }
  // Each would be opened, or told to announce nothing, while the running process still serves.
  if (o.plane.metrics) throw std::runtime_error("--take-over: [dataplane] metrics would be bound twice: restart without it");
  if (o.plane.announce) throw std::runtime_error("--take-over: [dataplane.announce] would be withdrawn while the running process serves");
  if (o.plane.peers || o.plane.pair) throw std::runtime_error("--take-over: a pair or peers keep their state over their own link");
}

// The workers' functions: built here, on this thread, before the run takes over (their tables'
// memory allocated while the running process still forwards), or each by its worker as it starts.
template <class Nf>
class WorkerFunctions {
 public:
  using Build = std::function<std::unique_ptr<Nf>(unsigned)>;
  WorkerFunctions(bool ahead, unsigned workers, Build build) : build_(std::move(build)) {
    for (unsigned w = 0; ahead && w < workers; ++w) built_.push_back(build_(w));
  }
  // Worker w's, on its thread.
  std::unique_ptr<Nf> operator()(unsigned w) { return built_.empty() ? build_(w) : std::move(built_[w]); }

 private:
  Build build_;
  std::vector<std::unique_ptr<Nf>> built_;  // by worker; each moved out by its own worker
};

std::span<const ServiceConfig> checked_services(const LiveServiceOptions& o) {
  const std::span<const ServiceConfig> services = o.nf == NfKind::slb                 ? std::span<const ServiceConfig>(o.slb.services)
                                                  : keeps_connections_on_backends(o.nf) ? std::span<const ServiceConfig>(o.lb.services)
                                                                                        : std::span<const ServiceConfig>();
  if (std::ranges::none_of(services, [](const ServiceConfig& s) { return s.health.has_value(); })) return {};
  return services;
}

}  // namespace

CounterBoard& live_counter_board() {
  static CounterBoard* board = new CounterBoard;
  return *board;
}

LiveReport run_live_service(const LiveServiceOptions& o, const std::atomic<bool>& stop, LiveObserver& observer) {
  if (o.workers == 0 || o.workers > kMaxWorkers) throw std::runtime_error(fmt::format("--workers must be in 1..{}", kMaxWorkers));
  const bool scheduled = keeps_connections_on_backends(o.nf) && !o.lb.changes.empty();
  const bool taking_over = o.state.take_over;
  if (taking_over) check_take_over(o);
  std::unique_ptr<ControlSocket> socket;
  // A run taking over opens its control socket (the running process's path) once it has the state.
  if (!o.plane.control_socket.empty() && !taking_over) {
    // The schedule's times and the socket's changes would both move the pool: the socket's checks could
    // not know which of the scheduled ones had been applied.
    if (scheduled) throw std::runtime_error("a control socket takes pool changes through it: no [[change]] schedule with it");
    socket = std::make_unique<ControlSocket>(o.plane.control_socket, o.plane.control_group);
  }
  // The schedule's times count from the start: a restored pool has been through some of its changes.
  if (scheduled && !o.state.path.empty()) throw std::runtime_error("a [[change]] schedule replays from the start: no state file with it");
  // The state to start from, read before anything starts: a missing or refused file stops the start
  // here (state_store.hpp).
  std::optional<KeptState<NatSnapshot>> nat_state;
  std::optional<KeptState<LbSnapshot>> lb_state;
  const auto load_state = [&] {
    if (o.nf == NfKind::nat) nat_state.emplace(o.state, load_nat_state(o.state, o.nat, o.workers, unix_now_ns()), o.workers);
    if (o.nf == NfKind::lb) lb_state.emplace(o.state, load_lb_state(o.state, o.lb, o.workers, unix_now_ns()), o.workers);
  };
  const auto state_note = [&] { return nat_state ? nat_state->note() : lb_state ? lb_state->note() : std::string(); };
  if (!taking_over) {
    load_state();
    if (!o.state.path.empty()) observer.state(state_note());
  }
  // A NAT pair's key and sync socket, before anything starts: a key file or an address that is wrong
  // stops the start here.
  std::optional<SyncKey> pair_key;
  std::unique_ptr<SyncSocket> pair_socket;
  if (o.nf == NfKind::nat && o.plane.pair) {
    if (!o.state.path.empty()) throw std::runtime_error("a NAT pair's standby takes its state from its active: no --state with [dataplane.pair]");
    if (o.nat.block_size != 0) throw std::runtime_error("a NAT pair does not sync port blocks: no [nat] block_size with [dataplane.pair]");
    pair_key.emplace(SyncKey::from_file(o.plane.pair->key_file));
    pair_socket = std::make_unique<SyncSocket>(o.plane.pair->local, o.plane.pair->peer);
  }
  // An LB's link to its peers, the same way.
  std::optional<SyncKey> peers_key;
  std::unique_ptr<LbPeerSync> peers;
  if (o.nf == NfKind::lb && o.plane.peers) {
    if (o.lb.policy != LbPolicy::maglev) {
      throw std::runtime_error("[dataplane.peers] shares the connections off today's Maglev choice: [lb] policy must be maglev");
    }
    if (const auto name = unshareable_backend_name(o.lb)) {
      throw std::runtime_error(fmt::format("[dataplane.peers]: backend '{}': a name longer than {} characters cannot be shared", *name,
                                           kMaxSharedBackendName));
    }
    peers_key.emplace(SyncKey::from_file(o.plane.peers->key_file));
    peers = std::make_unique<LbPeerSync>(*o.plane.peers, *peers_key, o.workers);
  }
  // The routing speaker told to announce nothing before anything starts: a restarted instance does not
  // keep a stopped one's announcement while it starts (a file that cannot be written stops the start).
  std::optional<RouteAnnouncer> announcer;
  if (o.plane.announce) announcer.emplace(*o.plane.announce, [&observer](const std::string& note) { observer.route(note); });
  // A stop during the start ends it after the step under way (each can take a second or more).
  const auto stopped = [&] { return stop.load(std::memory_order_relaxed); };
  LiveReport unstarted{.counters = {}, .workers = o.workers, .seconds = 0, .mbufs_missing = 0, .stopped_during_start = true};
  unstarted.counters.nf = nf_kind_name(o.nf);
  if (stopped()) return unstarted;
  start_dpdk_eal(o.eal_arguments);
  if (stopped()) return unstarted;
  FunctionAddresses addresses = addresses_of(o);
  if (lb_state) add_restored_hosts(addresses.next_hops, lb_state->restored());
  if (nat_state) add_restored_hosts(addresses.next_hops, nat_state->restored());
  DpdkPortGroup group(o.plane, o.workers, owner_of(o, addresses));
  if (stopped()) {
    unstarted.mbufs_missing = group.close();
    return unstarted;
  }
  CounterBoard& board = live_counter_board();
  LiveCounters initial;
  initial.nf = nf_kind_name(o.nf);
  board.publish(initial);
  register_telemetry_counters(board);
  std::unique_ptr<MetricsServer> metrics;
  if (o.plane.metrics) {
    metrics = std::make_unique<MetricsServer>(o.plane.metrics->address, o.plane.metrics->port,
                                              [&board] { return prometheus_text(board.read()); });
  }
  std::vector<LiveObserver::Port> ports;
  for (std::size_t p = 0; p < group.port_count(); ++p) ports.push_back({group.device(p), group.mac(p)});
  observer.started(ports, group.workers(), group.rx_queues());

  const Nanos now = DpdkPorts::now();
  std::optional<WorkerFunctions<LiveLb>> lbs;
  std::optional<WorkerFunctions<LiveNat>> nats;
  if (o.nf == NfKind::lb) lbs.emplace(taking_over, o.workers, [&](unsigned) { return std::make_unique<LiveLb>(o.lb, now); });
  if (o.nf == NfKind::nat && !pair_socket) {
    nats.emplace(taking_over, o.workers, [&](unsigned w) { return std::make_unique<LiveNat>(o.nat, w, o.workers, now); });
  }
  if (taking_over) {
    // Ready to serve: the running process's state now (it pauses), then its commit (it stops).
    const Nanos asked = DpdkPorts::now();
    ask_for_state(o.plane.control_socket, o.state.path);
    try {
      load_state();
    } catch (const StateRefused& e) {
      abort_hand_over(o.plane.control_socket);
      throw StateRefused(fmt::format("--take-over: {}; the running process forwards on", e.what()));
    } catch (const std::exception&) {
      abort_hand_over(o.plane.control_socket);  // it forwards again
      throw;
    }
    commit_hand_over(o.plane.control_socket);
    socket = std::make_unique<ControlSocket>(o.plane.control_socket, o.plane.control_group);
    observer.state(fmt::format("{} (taken over from the running process in {:.1f} ms)", state_note(),
                               static_cast<double>(DpdkPorts::now() - asked) / static_cast<double>(kNanosPerMilli)));
    if (lb_state) add_restored_hosts(addresses.next_hops, lb_state->restored());
    if (nat_state) add_restored_hosts(addresses.next_hops, nat_state->restored());
  }

  const std::vector<LbSnapshot> none;
  LiveSetup setup{o, group, addresses, socket.get(), change_rules_of(o, lb_state ? lb_state->restored() : none),
                  scheduled ? PoolChangeSchedule(o.lb.changes, o.lb.services, o.lb.maglev_size) : PoolChangeSchedule(),
                  checked_services(o), announcer ? &*announcer : nullptr};
  setup.discard_received = taking_over;
  switch (o.nf) {
    case NfKind::fwd: return serve(setup, [](unsigned) { return std::make_unique<Forwarder>(); }, stop, observer);
    case NfKind::slb: return serve(setup, [&](unsigned) { return std::make_unique<StatelessLb>(o.slb); }, stop, observer);
    case NfKind::lb: {
      KeptState<LbSnapshot>& kept = *lb_state;
      StateHooks<LiveLb> hooks =
          kept.hooks<LiveLb>([&](std::span<const LbSnapshot> saved) { save_lb_state(o.state.path, saved, o.lb, unix_now_ns()); });
      if (peers) {
        hooks.started = [restore = hooks.started, &peers](unsigned w, LiveLb& lb, Nanos at) {
          restore(w, lb, at);
          peers->attach(w, lb);
        };
        hooks.stopped = [keep = hooks.stopped, &peers](unsigned w, const LiveLb& lb, Nanos at) {
          keep(w, lb, at);
          peers->detach(w);
        };
        setup.link = [&peers](Engine& engine, const std::atomic<bool>& until) { peers->run(engine, until); };
      }
      LiveReport report = serve(setup, *lbs, stop, observer, std::move(hooks));
      if (peers) observer.pair(peers->summary());
      return report;
    }
    case NfKind::concury:
      return serve(setup, [&](unsigned) { return std::make_unique<ConcuryLb>(o.lb, ControlPlanePlace::worker); }, stop, observer);
    case NfKind::nat: {
      if (pair_socket) return serve_nat_pair(setup, *pair_key, *pair_socket, stop, observer, unstarted);
      KeptState<NatSnapshot>& kept = *nat_state;
      BlockJournal journal(o.nat, o.workers);
      StateHooks<LiveNat> hooks =
          kept.hooks<LiveNat>([&](std::span<const NatSnapshot> saved) { save_nat_state(o.state.path, saved, o.nat, unix_now_ns()); });
      hooks.started = [restore = hooks.started, &journal](unsigned w, LiveNat& nat, Nanos at) {
        restore(w, nat, at);
        journal.attach(w, nat);
      };
      hooks.tick = [&journal] { journal.write(); };
      hooks.finished = [save = hooks.finished, &journal](bool served) {
        journal.write();
        save(served);
      };
      return serve(setup, *nats, stop, observer, std::move(hooks));
    }
  }
  throw std::logic_error("an unknown function");
}

}  // namespace flowtrack
