// `flowtrack run`: replays a pcap through a network function on N workers (runtime/nf_runner.hpp) and
// writes what it forwards, merged back in time order, into --out. The report gives Mpps per worker (TSC time of the
// processing loop: parse, function, copy out), packets in and out, drops by reason, connections, and
// for the load balancers what each backend received.
#include <fmt/format.h>
#include <x86intrin.h>

#include <map>
#include <ranges>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/util/tsc.hpp"
#include "nf_launch.hpp"

namespace flowtrack::cli {
namespace {

struct RunCommandOptions {
  std::string nf = "lb";
  std::string config;
  std::string in, out;
  std::string out_format = "pcap";
  unsigned workers = 1;
  std::string table = "cuckoo";
  std::string scaling = "sharded";
  std::string aging = "wheel";
  bool json = false;
};

void report(const RunCommandOptions& o, const std::vector<WorkerResult>& results, std::size_t flows_in_trace) {
  std::uint64_t packets = 0, forwarded = 0, replied = 0, created = 0, live = 0;
  std::map<std::string, std::uint64_t> drops, backends;
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
    worker_mpps.push_back(r.cycles > 0 ? static_cast<double>(r.packets) * tsc_hz() / static_cast<double>(r.cycles) / 1e6 : 0);
  }
  const double mpps = aggregate_mpps(results);
  const bool lb = o.nf == "lb";
  if (o.json) {
    nlohmann::json j = {{"nf", o.nf}, {"table", o.table}, {"scaling", o.scaling}, {"aging", o.aging}, {"workers", o.workers},
                        {"mpps", mpps}, {"worker_mpps", worker_mpps}, {"packets_in", packets},
                        {"packets_out", forwarded}, {"packets_replied", replied}, {"drops", drops}, {"connections", created},
                        {"connections_live", live}};
    if (lb) j["backends"] = backends;
    if (o.nf == "slb") j["backend_packets"] = backends;
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("flowtrack run: nf {}, {} worker(s), table {}, {} aging, {} scaling\n", o.nf, o.workers, o.table, o.aging, o.scaling);
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
}

void run_command(const RunCommandOptions& o) {
  if (o.workers == 0 || o.workers > 64) throw UserError("run: --workers must be in 1..64");
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
  std::vector<WorkerResult> results;
  try {
    if (o.nf == "slb") configs.slb = load_stateless_lb_config(o.config);
    if (o.nf == "lb") configs.lb = load_stateful_lb_config(o.config);
    if (o.nf == "nat") configs.nat = load_nat_config(o.config);
    results = run_nf({o.nf, o.table, o.aging, o.scaling, o.workers}, configs, trace, partition);
  } catch (const ConfigError& e) {
    throw UserError(e.what());
  } catch (const UserError& e) {
    throw UserError(fmt::format("run: {}", e.what()));
  }
  if (!o.out.empty()) {
    const PacketStore merged = merge_in_time_order(results, trace.link_type());
    try {
      merged.save_pcap(o.out, o.out_format == "pcapng" ? CaptureFormat::pcapng : CaptureFormat::pcap);
    } catch (const PcapError& e) {
      throw UserError(e.what());
    }
  }
  report(o, results, flows);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCommandOptions>();
  auto* run = app.add_subcommand("run", "replay a pcap through a network function");
  run->add_option("--nf", o->nf, "fwd, slb, lb, nat")->check(CLI::IsMember({"fwd", "slb", "lb", "nat"}));
  run->add_option("--config", o->config, "the function's TOML configuration (see examples/)");
  run->add_option("--in", o->in, "input pcap or pcapng")->required();
  run->add_option("--out", o->out, "write the forwarded packets here");
  run->add_option("--out-format", o->out_format, "pcap (default) or pcapng")->check(CLI::IsMember({"pcap", "pcapng"}));
  run->add_option("--workers", o->workers, "worker threads (RSS steering)");
  run->add_option("--table", o->table, "connection table (lb, nat): any table of `bench table` but the many-writer ones");
  run->add_option("--scaling", o->scaling, "sharded (one function instance per worker) or spinlock (one shared instance, lb and nat)")
      ->check(CLI::IsMember(nf_scaling_names()));
  run->add_option("--aging", o->aging, "the connection tracker's expiry: wheel (timer wheel) or heap (binary heap)")
      ->check(CLI::IsMember(nf_aging_names()));
  run->add_flag("--json", o->json, "one JSON object");
  run->callback([o] { run_command(*o); });
}

}  // namespace flowtrack::cli
