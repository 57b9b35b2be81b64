// `flowtrack run`: replays a pcap through a network function on N workers (runtime/nf_runner.hpp), in
// bursts of --burst packets, and writes what it forwards, merged back in time order, into --out. The
// report gives Mpps per worker (TSC time of the burst loop: parse, function, expiry), packets in and
// out, drops by reason (a captured answer that no state of the function explains is not replayed:
// replay_unpresentable, replay_rehearsal.hpp; the answers a tunnel-mode service's backends send straight
// to the clients are left out too, and reported: direct_returns.hpp), connections, and for the load balancers what each
// backend received. With --dispatch rss|laps a dispatcher thread picks each packet's worker during the
// run; the report then adds the packets dropped at full rings (ring_full), LAPS's migrations, and the
// packets delivered out of their flow's order (runtime/reordering.hpp). With --check, the load balancers'
// verdicts pass through a consistency check (runtime/consistency_check.hpp) whose counts the report adds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "run_command.hpp"
#include "json_line.hpp"
#include "live_command.hpp"
#include "user_error.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "nf_launch.hpp"
#include "worker_limit.hpp"

namespace flowtrack::cli {
namespace {

// A load balancer's per-VIP or per-backend figures (nf/lb_stats.hpp), the rate of new connections over
// the trace's `seconds`.
std::map<std::string, JsonObject> traffic_json(const std::map<std::string, LbTraffic>& figures, double seconds) {
  std::map<std::string, JsonObject> out;
  for (const auto& [name, t] : figures) {
    out[name]
        .set("packets", t.packets)
        .set("bytes", t.bytes)
        .set("reply_packets", t.reply_packets)
        .set("reply_bytes", t.reply_bytes)
        .set("connections", t.connections)
        .set("connections_live", t.connections_live)
        .set("connections_per_second", seconds > 0 ? static_cast<double>(t.connections) / seconds : 0.0);
  }
  return out;
}

void print_traffic(std::string_view title, const std::map<std::string, LbTraffic>& figures, double seconds) {
  fmt::print("  {} (packets and bytes to the backends, answers through the balancer, connections: new, live, new a second):\n", title);
  for (const auto& [name, t] : figures) {
    fmt::print("    {:<24} {:>10} {:>13} {:>10} {:>13} {:>9} {:>9} {:>10.1f}\n", name, t.packets, t.bytes, t.reply_packets,
               t.reply_bytes, t.connections, t.connections_live, seconds > 0 ? static_cast<double>(t.connections) / seconds : 0.0);
  }
}

// `seconds`: the trace's, first packet to last (the rates' time).
void report(const RunCommandOptions& o, const NfRun& run, std::size_t flows_in_trace, double seconds) {
  const std::vector<WorkerReport>& results = run.workers;
  std::uint64_t packets = run.unpresentable, forwarded = 0, replied = 0, created = 0, live = 0;
  std::uint64_t migrations = 0, out_of_order = 0;
  const std::map<std::string, std::uint64_t> drops = run.drops_by_reason();
  std::map<std::string, std::uint64_t> backends, function_counts;
  LbStats stats;
  std::vector<double> worker_mpps;
  std::vector<std::uint64_t> worker_packets;
  ConsistencyCounts check;
  for (const WorkerReport& r : results) {
    packets += r.counters.packets + r.counters.ring_full;
    migrations += r.counters.migrations_in;
    out_of_order += r.counters.out_of_order;
    forwarded += r.forwarded;
    replied += r.replied;
    created += r.counters.function.connections_created;
    live += r.live_connections;
    for (const auto& [name, n] : r.backends) backends[name] += n;
    worker_packets.push_back(r.counters.packets);
    for (const auto& [name, n] : r.function_counts) function_counts[name] += n;
    stats += r.lb_stats;
    worker_mpps.push_back(r.counters.mpps());
    check.violations += r.check.violations;
    check.false_hits += r.check.false_hits;
  }
  const double mpps = aggregate_mpps(results);
  const bool lb = keeps_connections_on_backends(o.nf);
  const std::string_view nf = nf_kind_name(o.nf);
  if (o.json) {
    JsonObject j;
    j.set("nf", nf)
        .set("table", o.table)
        .set("scaling", o.scaling)
        .set("aging", o.aging)
        .set("control_plane", o.nf == NfKind::concury ? o.control_plane : "-")
        .set("workers", o.workers)
        .set("burst", o.burst)
        .set("mpps", mpps)
        .set("worker_mpps", worker_mpps)
        .set("packets_in", packets)
        .set("packets_out", forwarded)
        .set("packets_replied", replied)
        .set("packets_direct_return", run.direct_return)
        .set("drops", drops)
        .set("connections", created)
        .set("connections_live", live);
    if (lb) j.set("backends", backends);
    if (o.nf == NfKind::slb) j.set("backend_packets", backends);
    if (lb || o.nf == NfKind::slb) j.set("vips", traffic_json(stats.vips, seconds)).set("backend_stats", traffic_json(stats.backends, seconds));
    j.set("dispatch", o.dispatch);
    if (o.dispatch != "partition") {
      j.set("worker_packets", worker_packets).set("ring", o.ring).set("slow_worker_ns", o.slow_worker_ns).set("migrations", migrations).set("out_of_order", out_of_order);
    }
    if (!function_counts.empty()) j.set(nf, function_counts);
    if (o.check) j.set("check", JsonObject().set("violations", check.violations).set("false_hits", check.false_hits));
    j.print_line();
    return;
  }
  fmt::print("flowtrack run: nf {}, {} worker(s), table {}, {} aging, {} scaling, bursts of {}\n", nf, o.workers, o.table,
             o.aging, o.scaling, o.burst);
  fmt::print("  packets in {}, out {}, answered {}, {:.2f} Mpps ({:.2f})\n", packets, forwarded, replied, mpps,
             fmt::join(worker_mpps, " + "));
  if (run.direct_return != 0) {
    fmt::print("  answers from tunnel-mode backends straight to the clients, not replayed: {}\n", run.direct_return);
  }
  if (o.dispatch != "partition") {
    fmt::print("  dispatch {} (rings of {}, worker 0 slowed by {} ns a packet): {} migrations, {} packets out of order\n",
               o.dispatch, o.ring, o.slow_worker_ns, migrations, out_of_order);
  }
  std::uint64_t dropped = 0;
  for (const auto& [reason, n] : drops) dropped += n;
  fmt::print("  drops {}{}\n", dropped, drops.empty() ? "" : ":");
  for (const auto& [reason, n] : drops) fmt::print("    {:<24} {}\n", reason, n);
  if (lb || o.nf == NfKind::nat) fmt::print("  {} {} created ({} directed flows in the trace), {} live at the end\n", lb ? "connections" : "sessions", created, flows_in_trace, live);
  if (!backends.empty()) {
    fmt::print("  {}:\n", lb ? "connections per backend" : "packets per backend");
    for (const auto& [name, n] : backends) fmt::print("    {:<24} {}\n", name, n);
  }
  if (lb || o.nf == NfKind::slb) {
    print_traffic("per VIP", stats.vips, seconds);
    print_traffic("per backend", stats.backends, seconds);
  }
  if (!function_counts.empty()) {
    fmt::print("  {}:\n", nf);
    for (const auto& [name, n] : function_counts) fmt::print("    {:<24} {}\n", name, n);
  }
  if (o.check) fmt::print("  check: {} violations, {} false hits\n", check.violations, check.false_hits);
}

DispatchOptions dispatch_options(const RunCommandOptions& o) {
  DispatchOptions d;
  d.policy = dispatch_policy(o.dispatch);
  if (d.policy == DispatchPolicy::laps && (o.nf == NfKind::lb || o.nf == NfKind::nat) && o.scaling == "sharded") {
    throw UserError(fmt::format("run: --dispatch laps moves connections between workers, and a sharded {} would leave their "
                                "state behind: use --scaling spinlock (one shared instance)",
                                nf_kind_name(o.nf)));
  }
  if (o.ring < 2 || o.ring > (std::size_t{1} << 24)) throw UserError("run: --ring must be in 2..16777216");
  if (d.policy == DispatchPolicy::partition && (o.slow_worker_ns != 0)) {
    throw UserError("run: --slow-worker-ns slows a dispatched run's worker 0: give --dispatch rss or laps");
  }
  d.ring_capacity = o.ring;
  d.slow_worker = std::chrono::nanoseconds(o.slow_worker_ns);
  return d;
}

}  // namespace

void run_command(const RunCommandOptions& o) {
  if (o.control_plane != "worker" && (o.nf != NfKind::concury || !o.dpdk.empty())) {
    throw UserError("run: --control-plane is Concury's, on a trace (--nf concury --in FILE)");
  }
  if (o.start_empty && o.state.empty()) throw UserError("run: --start-empty says what to do without a state file: it needs --state FILE");
  if (o.take_over && o.state.empty()) throw UserError("run: --take-over takes the running process's state through --state FILE");
  if (!o.state.empty() && (o.dpdk.empty() || (o.nf != NfKind::nat && o.nf != NfKind::lb))) {
    throw UserError("run: --state keeps the state of a live nat or lb (--nf nat or lb, --dpdk) across a restart");
  }
  if (!o.dpdk.empty()) {
#ifdef FLOWTRACK_WITH_DPDK
    return live_command(o);
#else
    throw UserError("run: --dpdk: this flowtrack is built without DPDK (configured with FLOWTRACK_WITH_DPDK=OFF)");
#endif
  }
  if (o.in.empty()) throw UserError("run: --in FILE (a trace) or --dpdk \"EAL arguments\" (live ports) is needed");
  check_workers("run", o.workers);
  if (o.burst == 0 || o.burst > kMaxBurst) throw UserError(fmt::format("run: --burst must be in 1..{}", kMaxBurst));
  if (o.nf != NfKind::fwd && o.config.empty()) throw UserError(fmt::format("run: --nf {} needs --config FILE", nf_kind_name(o.nf)));
  // Read and checked before the trace: a mistake in it costs no load. One instance per worker, or one
  // shared (spinlock).
  NfConfigs configs;
  Footprint footprint;
  if (!o.config.empty()) {
    configs = load_nf_configs(o.nf, read_config_file(o.config));
    footprint = nf_footprint(o.nf, configs, o.scaling == "spinlock" ? 1 : o.workers);
    check_footprint(footprint, o.config);
  }
  const PacketStore trace = PacketStore::load_pcap(o.in);
  ReplayOptions options{.burst = o.burst, .keep_output = !o.out.empty(), .dispatch = dispatch_options(o)};
  PacketPartition partition = partition_by_rss(trace, RssSteering(o.workers));
  if (options.dispatch.policy != DispatchPolicy::partition) partition.tags = tag_packets(trace, RssSteering(o.workers));
  std::size_t flows = 0;
  for (const std::size_t f : partition.ipv4_flows) flows += f;

  announce_slow_build(o.nf, footprint);
  if (keeps_connections_on_backends(o.nf)) {
    options.changes = PoolChangeSchedule(configs.lb.changes, configs.lb.services, configs.lb.maglev_size);
    if (o.check) options.check = configs.lb.timeouts.tcp_timeout(TcpState::syn_sent);
  }
  if (o.check && !keeps_connections_on_backends(o.nf)) {
    throw UserError(fmt::format("run: --check checks a load balancer's backends: {} has none", nf_kind_name(o.nf)));
  }
  const NfRun run = run_nf({o.nf, o.table, o.aging, o.scaling, o.workers, o.control_plane}, configs, trace, partition, options);
  if (!o.out.empty()) {
    const PacketStore merged = merge_in_time_order(run.workers, trace.link_type());
    merged.save_pcap(o.out, o.out_format == "pcapng" ? CaptureFormat::pcapng : CaptureFormat::pcap);
  }
  const double seconds = trace.empty() ? 0 : static_cast<double>(trace[trace.size() - 1].timestamp_ns - trace[0].timestamp_ns) / 1e9;
  report(o, run, flows, seconds);
}

}  // namespace flowtrack::cli
