// The live run: EAL with the operator's arguments, the ports of [dataplane] (runtime/dpdk_port_group.hpp),
// and --workers workers, each its own function instance on its own queues (runtime/dpdk_ports.hpp)
// running runtime/live_loop.hpp: worker 0 on this thread, the others on threads of their own. Packets
// a worker does not own reach their owner over the hand-off rings (runtime/packet_owner.hpp): the NAT's
// workers cut the external ports in slices, the LB's keep a client on one worker. Every packet reaches
// the function with the role of the port it arrived on ([[dataplane.port]] role: the NAT's inside and
// outside, the LB's clients and backends), from which the function draws its boundary.
// Every stats interval a line of rates, drops by reason and live connections, summed over the workers;
// on SIGINT or SIGTERM every worker ends at its next tick, the ports close, and the report follows
// (text or --json). The mbufs are counted back into their pool: a missing one is an error (exit status
// 1) after the report. With a control socket ([dataplane] control_socket), worker 0 serves its requests
// at every tick (100 ms): counters, and the LB's pool changes, which every worker has applied, between
// two of its bursts, before the answer goes out (the others' ticks are cut short for it). Each worker
// leaves a copy of its counters at every tick; worker 0 sums them and publishes the sum (runtime/live_counters.hpp) for the threads that serve them without touching
// a worker: DPDK telemetry's (/flowtrack/counters, ...) and, with [dataplane] metrics, an HTTP
// listener's Prometheus text.
//
// The stateful functions run on the default connection table and timer-wheel aging only: one more
// instantiation each, not the grid's (the table and aging choice is measured by `bench nf`).
#include "live_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <variant>

#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/nf/control_request.hpp"
#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/runtime/control_socket.hpp"
#include "flowtrack/runtime/dpdk_port_group.hpp"
#include "flowtrack/runtime/live_counters.hpp"
#include "flowtrack/runtime/live_loop.hpp"
#include "flowtrack/runtime/metrics_server.hpp"
#include "flowtrack/runtime/prometheus_text.hpp"
#include "flowtrack/runtime/telemetry_counters.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/dpdk_eal_start.hpp"
#include "json_line.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

using LiveLb = StatefulLb<CuckooTable<FlowKeyV4>, TimerWheel>;
using LiveNat = Nat44<CuckooTable<FlowKeyV4>, TimerWheel>;

// Set by the signal handler, read by the loop at every tick (a lock-free atomic store is signal-safe).
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void request_stop(int) { stop_requested.store(true, std::memory_order_relaxed); }

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// What the function owns (ARP is answered for it) and the next hops worth resolving before traffic.
struct FunctionAddresses {
  std::vector<std::uint32_t> owned, next_hops;
};

FunctionAddresses addresses_of(const std::vector<ServiceConfig>& services) {
  FunctionAddresses a;
  for (const ServiceConfig& s : services) {
    a.owned.push_back(s.vip);
    for (const BackendConfig& b : s.backends) a.next_hops.push_back(b.address);
  }
  return a;
}

template <class Nf>
LiveCounters state_of(const Nf& nf, const std::string& name, const DpdkPorts& ports, const BurstLoopCounters& loop) {
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
  for (std::size_t r = 0; r < kParseStatusCount; ++r) {
    if (loop.parse_drops[r] != 0) s.drops[std::string(parse_status_name(static_cast<ParseStatus>(r)))] += loop.parse_drops[r];
  }
  const NfCounters c = nf.counters();
  for (std::size_t d = 0; d < kNfDropCount; ++d) {
    if (c.drops[d] != 0) s.drops[std::string(nf_drop_name(static_cast<NfDrop>(d)))] += c.drops[d];
  }
  for (std::size_t d = 0; d < kPortDropCount; ++d) {
    if (p.drops[d] != 0) s.drops[std::string(port_drop_name(static_cast<PortDrop>(d)))] += p.drops[d];
  }
  s.connections = c.connections_created;
  if constexpr (std::is_same_v<Nf, LiveLb>) {
    s.connections_live = nf.tracker().size();
    for (const Service& service : nf.services()) {
      for (const Backend& b : service.backends()) {
        s.backends[b.config.name] += b.total_connections;
        auto& phases = s.backend_connections[b.config.name];
        for (std::size_t phase = 0; phase < kConnectionPhaseCount; ++phase) phases[phase] += b.by_phase[phase];
      }
    }
  }
  if constexpr (std::is_same_v<Nf, LiveNat>) s.connections_live = nf.sessions().size();
  return s;
}

std::string drops_text(const std::map<std::string, std::uint64_t>& drops) {
  std::uint64_t total = 0;
  std::string detail;
  for (const auto& [reason, n] : drops) {
    total += n;
    detail += fmt::format("{}{} {}", detail.empty() ? "" : ", ", reason, n);
  }
  return drops.empty() ? "0" : fmt::format("{} ({})", total, detail);
}

// Each backend's live connections by phase: {"b1": {"opening": 0, "established": 3, "closing": 12}}.
std::map<std::string, std::map<std::string, std::uint64_t>> phases_json(const LiveCounters& s) {
  std::map<std::string, std::map<std::string, std::uint64_t>> out;
  for (const auto& [name, phases] : s.backend_connections) {
    for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) out[name][std::string(connection_phase_name(static_cast<ConnectionPhase>(p)))] = phases[p];
  }
  return out;
}

// What the control socket's `counters` answers, and the report starts from.
JsonObject counters_json(const LiveCounters& s) {
  JsonObject j;
  j.set("nf", s.nf)
      .set("packets_in", s.packets_in)
      .set("packets_to_function", s.packets_to_function)
      .set("packets_out", s.packets_out)
      .set("drops", s.drops)
      .set("connections", s.connections)
      .set("connections_live", s.connections_live)
      .set("arp_answered", s.arp_answered)
      .set("arp_asked", s.arp_asked)
      .set("handed_off", s.handed_off)
      .set("handoff_backoffs", s.handoff_backoffs);
  if (!s.backends.empty()) j.set("backends", s.backends).set("backend_connections", phases_json(s));
  return j;
}

// The control socket's answer to `line`. Pool changes (lb only) are checked with every change made so
// far (`applied`, in order) against the configured pool, so one that does not fit is refused whole;
// one that fits goes to every worker (`distribute`, which gives the reply).
template <class Nf, class Distribute>
std::string answer(std::string_view line, const RunCommandOptions& o, const StatefulLbConfig& lb,
                   std::vector<PoolChange>& applied, const LiveCounters& state, Distribute&& distribute) {
  const auto parsed = parse_control_request(line);
  if (const auto* error = std::get_if<std::string>(&parsed)) return "error: " + *error;
  const ControlRequest& request = std::get<ControlRequest>(parsed);
  if (request.kind == ControlRequest::Kind::counters) return counters_json(state).dump();
  if constexpr (std::is_same_v<Nf, LiveLb>) {
    applied.push_back(request.change);
    if (const auto problem = check_pool_changes(applied, lb.services, lb.maglev_size)) {
      applied.pop_back();
      return fmt::format("error: {}: {}", problem->key, problem->problem);
    }
    return distribute(request.change);
  } else {
    return fmt::format("error: nf {} has no backend pool to change (only lb takes pool changes)", o.nf);
  }
}

// One worker: its function instance, its view of the ports, its loop's counters, and what it shares
// with worker 0 under `lock`: the copy of its counters it leaves at every tick, the pool changes it
// is to apply at its next one (`posted` of them so far; `taken` says how many it has applied).
template <class Nf>
struct LiveWorker {
  std::unique_ptr<Nf> nf;
  std::unique_ptr<DpdkPorts> ports;
  BurstLoopCounters loop;
  std::mutex lock;
  LiveCounters published;
  std::vector<PoolChange> changes;
  std::uint64_t posted = 0;
  std::atomic<std::uint64_t> taken{0};

  // At every tick, on the worker's own thread.
  void tick(const std::string& name) {
    const std::lock_guard guard(lock);
    if constexpr (std::is_same_v<Nf, LiveLb>) {
      for (const PoolChange& change : changes) apply_pool_change(change, nf->services());
    }
    changes.clear();
    taken.store(posted, std::memory_order_release);
    published = state_of(*nf, name, *ports, loop);
  }

  // From worker 0's thread: queues `change` and cuts the worker's tick short so that it applies the
  // change before its next poll; returns the count to wait for in `taken`.
  std::uint64_t post(const PoolChange& change) {
    std::uint64_t wait_for = 0;
    {
      const std::lock_guard guard(lock);
      changes.push_back(change);
      wait_for = ++posted;
    }
    ports->cut_tick();
    return wait_for;
  }
};

// How long worker 0 waits for the others to take a pool change before it answers: a worker between
// two polls takes it within a burst; one the system does not schedule takes it at its next tick.
constexpr Nanos kChangeWait = 2 * kNanosPerSecond;

void add_counters(LiveCounters& sum, const LiveCounters& w) {
  sum.packets_in += w.packets_in;
  sum.packets_to_function += w.packets_to_function;
  sum.packets_out += w.packets_out;
  for (const auto& [reason, n] : w.drops) sum.drops[reason] += n;
  sum.connections += w.connections;
  sum.connections_live += w.connections_live;
  sum.arp_answered += w.arp_answered;
  sum.arp_asked += w.arp_asked;
  sum.handed_off += w.handed_off;
  sum.handoff_backoffs += w.handoff_backoffs;
  for (const auto& [name, n] : w.backends) sum.backends[name] += n;
  for (const auto& [name, phases] : w.backend_connections) {
    for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) sum.backend_connections[name][p] += phases[p];
  }
}

template <class Nf>
LiveCounters summed(std::vector<std::unique_ptr<LiveWorker<Nf>>>& workers, const std::string& name) {
  LiveCounters sum;
  sum.nf = name;
  for (auto& w : workers) {
    const std::lock_guard guard(w->lock);
    add_counters(sum, w->published);
  }
  return sum;
}

template <class Nf>
void serve(std::vector<std::unique_ptr<LiveWorker<Nf>>>& workers, DpdkPortGroup& group, const RunCommandOptions& o,
           const DataplaneConfig& plane, ControlSocket* control, const StatefulLbConfig& lb, CounterBoard& board) {
  std::vector<PoolChange> applied;
  const Nanos start = DpdkPorts::now();
  Nanos next_stats = start + plane.stats_interval;
  LiveCounters last;
  std::FILE* stats = o.json ? stderr : stdout;  // --json: stdout holds the report alone
  for (std::size_t p = 0; p < group.port_count(); ++p) {
    fmt::print(stats, "flowtrack live: nf {}, port {} {} mac {}, {} worker(s), {} RX queue(s)\n", o.nf, p, group.device(p),
               mac_to_string(group.mac(p)), group.workers(), group.rx_queues());
  }
  std::fflush(stats);
  for (auto& w : workers) w->tick(o.nf);
  board.publish(summed(workers, o.nf));
  const LiveLoopOptions options{.burst = o.burst};
  std::vector<std::thread> threads;
  {
    // Whatever ends worker 0's loop (a signal, an error) ends the others' too.
    struct StopAll {
      std::vector<std::thread>& threads;
      ~StopAll() {
        stop_requested.store(true, std::memory_order_relaxed);
        for (std::thread& t : threads) t.join();
      }
    } stop_all{threads};
    for (std::size_t k = 1; k < workers.size(); ++k) {
      LiveWorker<Nf>& w = *workers[k];
      threads.emplace_back([&w, &o, &options] {
        run_live(*w.nf, *w.ports, options, stop_requested, w.loop, [&](Nanos) { w.tick(o.nf); });
      });
    }
    LiveWorker<Nf>& first = *workers[0];
    // A pool change reaches every worker before the answer: the others take it at once (their ticks
    // cut short) while worker 0, serving the socket between its own bursts, waits for them, then
    // applies it itself. So once `ctl` has its "ok", no worker opens a connection by the old pool.
    const auto distribute = [&](const PoolChange& change) -> std::string {
      std::vector<std::uint64_t> wait_for(workers.size());
      for (std::size_t k = 1; k < workers.size(); ++k) wait_for[k] = workers[k]->post(change);
      const Nanos give_up = DpdkPorts::now() + kChangeWait;
      std::vector<std::size_t> late;
      for (std::size_t k = 1; k < workers.size(); ++k) {
        while (workers[k]->taken.load(std::memory_order_acquire) < wait_for[k] && DpdkPorts::now() < give_up) {
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        if (workers[k]->taken.load(std::memory_order_acquire) < wait_for[k]) late.push_back(k);
      }
      if constexpr (std::is_same_v<Nf, LiveLb>) apply_pool_change(change, first.nf->services());
      if (late.empty()) return "ok";
      return fmt::format("ok (worker(s) {} take it at their next tick)", fmt::join(late, ", "));
    };
    run_live(*first.nf, *first.ports, options, stop_requested, first.loop, [&](Nanos now) {
      first.tick(o.nf);
      const LiveCounters s = summed(workers, o.nf);
      board.publish(s);
      if (control != nullptr) {
        control->serve([&](std::string_view line) { return answer<Nf>(line, o, lb, applied, s, distribute); });
      }
      if (now < next_stats) return;
      const double seconds = static_cast<double>(now - next_stats + plane.stats_interval) / 1e9;
      fmt::print(stats, "flowtrack live: {:.0f} s, in {:.4f} Mpps, out {:.4f} Mpps, drops so far {}, live connections {}\n",
                 static_cast<double>(now - start) / 1e9, static_cast<double>(s.packets_in - last.packets_in) / seconds / 1e6,
                 static_cast<double>(s.packets_out - last.packets_out) / seconds / 1e6, drops_text(s.drops), s.connections_live);
      std::fflush(stats);
      last = s;
      next_stats = now + plane.stats_interval;
    });
  }
  const double seconds = static_cast<double>(DpdkPorts::now() - start) / 1e9;
  for (auto& w : workers) {
    w->ports->close();
    w->tick(o.nf);
  }
  const LiveCounters s = summed(workers, o.nf);
  board.publish(s);
  const std::size_t missing = group.close();
  if (o.json) {
    counters_json(s)
        .set("mode", "live")
        .set("workers", group.workers())
        .set("seconds", seconds)
        .set("mpps_in", seconds > 0 ? static_cast<double>(s.packets_in) / seconds / 1e6 : 0.0)
        .set("mpps_out", seconds > 0 ? static_cast<double>(s.packets_out) / seconds / 1e6 : 0.0)
        .set("mbufs_missing", missing)
        .print_line();
  } else {
    fmt::print("flowtrack live: nf {} stopped after {:.1f} s, {} worker(s)\n", o.nf, seconds, group.workers());
    fmt::print("  packets in {}, to the function {}, out {}, handed between workers {} (waited for room {} times)\n", s.packets_in,
               s.packets_to_function, s.packets_out, s.handed_off, s.handoff_backoffs);
    fmt::print("  drops {}\n", drops_text(s.drops));
    fmt::print("  connections {} created, {} live at the end; ARP: {} answered, {} asked\n", s.connections,
               s.connections_live, s.arp_answered, s.arp_asked);
    for (const auto& [name, n] : s.backends) {
      const auto& live = s.backend_connections.at(name);
      fmt::print("    {:<24} {} created; live: {} opening, {} established, {} closing\n", name, n,
                 live[static_cast<std::size_t>(ConnectionPhase::opening)], live[static_cast<std::size_t>(ConnectionPhase::established)],
                 live[static_cast<std::size_t>(ConnectionPhase::closing)]);
    }
    fmt::print("  mbufs missing from their pool: {}\n", missing);
  }
  if (missing != 0) throw std::runtime_error(fmt::format("{} mbufs did not come back to their pool", missing));
}

// The workers of function Nf, each made by make(worker) with its own ports.
template <class Nf, class Make>
void serve_workers(DpdkPortGroup& group, const FunctionAddresses& addresses, Make&& make, const RunCommandOptions& o,
                   const DataplaneConfig& plane, ControlSocket* control, const StatefulLbConfig& lb, CounterBoard& board) {
  std::vector<std::unique_ptr<LiveWorker<Nf>>> workers;
  for (unsigned w = 0; w < group.workers(); ++w) {
    workers.push_back(std::make_unique<LiveWorker<Nf>>());
    workers.back()->nf = make(w);
    workers.back()->ports = std::make_unique<DpdkPorts>(group, w, addresses.owned, addresses.next_hops);
  }
  serve(workers, group, o, plane, control, lb, board);
}

// The counters' copy for other threads (telemetry, metrics): DPDK's telemetry cannot unregister its
// commands, so the board they read lives as long as the process (never destroyed: no exit-time race
// with the telemetry thread).
CounterBoard& live_board() {
  static CounterBoard* board = new CounterBoard;
  return *board;
}

}  // namespace

void live_command(const RunCommandOptions& o) {
  if (!o.in.empty() || !o.out.empty()) throw UserError("run: --dpdk runs on ports: no --in or --out");
  if (o.workers == 0 || o.workers > 64) throw UserError("run: --workers must be in 1..64");
  if (o.scaling != "sharded" || o.table != "cuckoo" || o.aging != "wheel") {
    throw UserError("run: --dpdk runs the default table, aging and scaling (cuckoo, wheel, sharded)");
  }
  if (o.burst == 0 || o.burst > kMaxBurst) throw UserError(fmt::format("run: --burst must be in 1..{}", kMaxBurst));
  if (o.config.empty()) throw UserError("run: --dpdk needs --config FILE with a [dataplane] table");
  DataplaneConfig plane;
  StatelessLbConfig slb;
  StatefulLbConfig lb;
  NatConfig nat;
  FunctionAddresses addresses;
  try {
    plane = load_dataplane_config(o.config, o.nf);
    if (o.nf == "slb") addresses = addresses_of((slb = load_stateless_lb_config(o.config)).services);
    if (o.nf == "lb") addresses = addresses_of((lb = load_stateful_lb_config(o.config)).services);
    if (o.nf == "nat") addresses.owned = (nat = load_nat_config(o.config)).pool;
  } catch (const ConfigError& e) {
    throw UserError(e.what());
  }
  std::unique_ptr<ControlSocket> control;
  if (!plane.control_socket.empty()) {
    // The schedule's times and the socket's changes would both move the pool: the socket's checks
    // (check_pool_changes) could not know which of the scheduled ones had been applied.
    if (!lb.changes.empty()) throw UserError("run: --dpdk with a control socket takes pool changes through it, not [[change]]");
    try {
      control = std::make_unique<ControlSocket>(plane.control_socket, plane.control_group);
    } catch (const std::runtime_error& e) {
      throw UserError(fmt::format("run: {}", e.what()));
    }
  }
  try {
    start_dpdk_eal(split_words(o.dpdk));
  } catch (const std::runtime_error& e) {
    throw UserError(fmt::format("run: --dpdk '{}': {}", o.dpdk, e.what()));
  }
  PacketOwner owner = PacketOwner::spread(o.workers);
  if (o.nf == "lb") owner = PacketOwner::lb_client(o.workers, addresses.owned);
  if (o.nf == "nat") owner = PacketOwner::nat(o.workers, nat);
  std::unique_ptr<DpdkPortGroup> group;
  try {
    group = std::make_unique<DpdkPortGroup>(plane, o.workers, owner);
  } catch (const std::runtime_error& e) {
    throw UserError(fmt::format("run: {}", e.what()));
  }
  CounterBoard& board = live_board();
  std::unique_ptr<MetricsServer> metrics;
  try {
    register_telemetry_counters(board);
    if (plane.metrics) {
      metrics = std::make_unique<MetricsServer>(plane.metrics->address, plane.metrics->port,
                                                [&board] { return prometheus_text(board.read()); });
    }
  } catch (const std::runtime_error& e) {
    throw UserError(fmt::format("run: {}", e.what()));
  }
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  const Nanos now = DpdkPorts::now();
  if (o.nf == "fwd") {
    serve_workers<Forwarder>(*group, addresses, [](unsigned) { return std::make_unique<Forwarder>(); }, o, plane, control.get(), lb, board);
  } else if (o.nf == "slb") {
    serve_workers<StatelessLb>(*group, addresses, [&](unsigned) { return std::make_unique<StatelessLb>(slb); }, o, plane,
                               control.get(), lb, board);
  } else if (o.nf == "lb") {
    serve_workers<LiveLb>(*group, addresses, [&](unsigned) { return std::make_unique<LiveLb>(lb, now); }, o, plane,
                          control.get(), lb, board);
  } else {
    serve_workers<LiveNat>(*group, addresses, [&](unsigned w) { return std::make_unique<LiveNat>(nat, w, o.workers, now); }, o,
                           plane, control.get(), lb, board);
  }
}

}  // namespace flowtrack::cli
