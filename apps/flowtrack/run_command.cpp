// `flowtrack run`: replays a pcap through a network function on N workers (runtime/nf_runner.hpp), in
// bursts of --burst packets, and writes what it forwards, merged back in time order, into --out. The
// report gives Mpps per worker (TSC time of the burst loop: parse, function, expiry), packets in and
// out, drops by reason (a captured answer that no state of the function explains is not replayed:
// replay_unpresentable, replay_rehearsal.hpp), connections, and for the load balancers what each
// backend received.
#include <fmt/format.h>
#include <x86intrin.h>

#include <map>
#include <ranges>
#include <thread>

#include "run_command.hpp"
#include "json_line.hpp"
#include "user_error.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/util/tsc.hpp"
#include "nf_launch.hpp"

namespace flowtrack::cli {
namespace {

void report(const RunCommandOptions& o, const NfRun& run, std::size_t flows_in_trace) {
  const std::vector<WorkerResult>& results = run.workers;
  std::uint64_t packets = run.unpresentable, forwarded = 0, replied = 0, created = 0, live = 0;
  std::map<std::string, std::uint64_t> drops, backends, function_counts;
  if (run.unpresentable != 0) drops["replay_unpresentable"] = run.unpresentable;
  std::vector<double> worker_mpps;
  for (const WorkerResult& r : results) {
    packets += r.packets;
    forwarded += r.forwarded;
    replied += r.replied;
    created += r.counters.connections_created;
    live += r.live_connections;
    for (std::size_t s = 0; s < kParseStatusCount; ++s) {
      if (r.parse_drops[s] != 0) drops[std::string(parse_status_name(static_cast<ParseStatus>(s)))] += r.parse_drops[s];
    }
    for (std::size_t d = 0; d < kNfDropCount; ++d) {
      if (r.counters.drops[d] != 0) drops[std::string(nf_drop_name(static_cast<NfDrop>(d)))] += r.counters.drops[d];
    }
    for (const auto& [name, n] : r.backends) backends[name] += n;
    for (const auto& [name, n] : r.function_counts) function_counts[name] += n;
    worker_mpps.push_back(r.cycles > 0 ? static_cast<double>(r.packets) * tsc_hz() / static_cast<double>(r.cycles) / 1e6 : 0);
  }
  const double mpps = aggregate_mpps(results);
  const bool lb = o.nf == "lb" || o.nf == "concury";
  if (o.json) {
    JsonObject j;
    j.set("nf", o.nf)
        .set("table", o.table)
        .set("scaling", o.scaling)
        .set("aging", o.aging)
        .set("workers", o.workers)
        .set("burst", o.burst)
        .set("mpps", mpps)
        .set("worker_mpps", worker_mpps)
        .set("packets_in", packets)
        .set("packets_out", forwarded)
        .set("packets_replied", replied)
        .set("drops", drops)
        .set("connections", created)
        .set("connections_live", live);
    if (lb) j.set("backends", backends);
    if (o.nf == "slb") j.set("backend_packets", backends);
    if (!function_counts.empty()) j.set(o.nf, function_counts);
    j.print_line();
    return;
  }
  fmt::print("flowtrack run: nf {}, {} worker(s), table {}, {} aging, {} scaling, bursts of {}\n", o.nf, o.workers, o.table,
             o.aging, o.scaling, o.burst);
  fmt::print("  packets in {}, out {}, answered {}, {:.2f} Mpps ({})\n", packets, forwarded, replied, mpps,
             fmt::join(worker_mpps | std::views::transform([](double m) { return fmt::format("{:.2f}", m); }), " + "));
  std::uint64_t dropped = 0;
  for (const auto& [reason, n] : drops) dropped += n;
  fmt::print("  drops {}{}\n", dropped, drops.empty() ? "" : ":");
  for (const auto& [reason, n] : drops) fmt::print("    {:<24} {}\n", reason, n);
  if (lb || o.nf == "nat") fmt::print("  {} {} created ({} directed flows in the trace), {} live at the end\n", lb ? "connections" : "sessions", created, flows_in_trace, live);
  if (!backends.empty()) {
    fmt::print("  {}:\n", lb ? "connections per backend" : "packets per backend");
    for (const auto& [name, n] : backends) fmt::print("    {:<24} {}\n", name, n);
  }
  if (!function_counts.empty()) {
    fmt::print("  {}:\n", o.nf);
    for (const auto& [name, n] : function_counts) fmt::print("    {:<24} {}\n", name, n);
  }
}

}  // namespace

void run_command(const RunCommandOptions& o) {
  if (o.workers == 0 || o.workers > 64) throw UserError("run: --workers must be in 1..64");
  if (o.burst == 0 || o.burst > kMaxBurst) throw UserError(fmt::format("run: --burst must be in 1..{}", kMaxBurst));
  if (o.nf != "fwd" && o.config.empty()) throw UserError(fmt::format("run: --nf {} needs --config FILE", o.nf));
  PacketStore trace;
  try {
    trace = PacketStore::load_pcap(o.in);
  } catch (const PcapError& e) {
    throw UserError(e.what());
  }
  const PacketPartition partition = partition_by_rss(trace, RssSteering(o.workers));
  std::size_t flows = 0;
  for (const std::size_t f : partition.ipv4_flows) flows += f;

  NfConfigs configs;
  NfRun run;
  try {
    if (o.nf == "slb") configs.slb = load_stateless_lb_config(o.config);
    if (o.nf == "lb" || o.nf == "concury") configs.lb = load_stateful_lb_config(o.config);
    if (o.nf == "nat") configs.nat = load_nat_config(o.config);
    // Concury checks itself in every run (its audit: violations, false_hits).
    run = run_nf({o.nf, o.table, o.aging, o.scaling, o.workers, o.nf == "concury"}, configs, trace, partition,
                 {.burst = o.burst, .keep_output = !o.out.empty()});
  } catch (const ConfigError& e) {
    throw UserError(e.what());
  } catch (const UserError& e) {
    throw UserError(fmt::format("run: {}", e.what()));
  }
  if (!o.out.empty()) {
    const PacketStore merged = merge_in_time_order(run.workers, trace.link_type());
    try {
      merged.save_pcap(o.out, o.out_format == "pcapng" ? CaptureFormat::pcapng : CaptureFormat::pcap);
    } catch (const PcapError& e) {
      throw UserError(e.what());
    }
  }
  report(o, run, flows);
}

}  // namespace flowtrack::cli
