// `flowtrack bench nf`: packets per second of each network function (the NAT replaying the trace as
// captured inside, nat_replay.hpp) on the campus trace multiplied by
// shifted windows, for every connection table (the stateful LB's), on 1..N sharded workers (nf_runner
// .hpp), median of --reps. Reports each function against the forwarder measured in the same run (seed
// 000: the stateless LB ran ~60 % faster than the stateful one) and ranks the tables for the
// stateful LB.
#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/table/registry.hpp"
#include "nat_replay.hpp"
#include "nf_runner.hpp"

namespace flowtrack::cli {
namespace {

struct NfBenchOptions {
  std::vector<std::string> nfs{"fwd", "slb", "lb", "nat"};
  std::vector<std::string> tables{"cuckoo", "cuckoopp", "dpdk", "chained", "robinhood", "hopscotch", "swiss", "stdmap"};
  std::vector<unsigned> workers;
  std::uint32_t flows = 20'000;
  unsigned windows = 4;
  unsigned reps = 3;
  bool quick = false;
  bool json = false;
};

// The campus profile's servers as VIPs: TCP 443 and 80, UDP 53 and 443, three backends each.
std::vector<ServiceConfig> campus_services(const CampusProfile& profile) {
  std::vector<ServiceConfig> services;
  for (std::uint32_t server = 1; server <= profile.servers; ++server) {
    for (const auto& [port, protocol] : {std::pair{443, ipproto::kTcp}, std::pair{80, ipproto::kTcp},
                                         std::pair{53, ipproto::kUdp}, std::pair{443, ipproto::kUdp}}) {
      ServiceConfig s{fmt::format("svc-{}-{}", server, port), to_network32(profile.server_network + server),
                      to_network16(static_cast<std::uint16_t>(port)), protocol, {}};
      for (std::uint32_t b = 1; b <= 3; ++b) s.backends.push_back({fmt::format("backend-{}", b), to_network32(0x0ac80000 + b), 0, 1});
      services.push_back(s);
    }
  }
  return services;
}

struct Row {
  std::string nf, table;
  unsigned workers;
  std::vector<double> mpps, cycles;
};

void run_nf_bench(NfBenchOptions o) {
  if (o.quick) {
    o.flows = std::min<std::uint32_t>(o.flows, 5'000);
    o.windows = std::min(o.windows, 2u);
    o.tables = {"cuckoo", "dpdk", "chained", "stdmap"};
    o.reps = std::min(o.reps, 3u);
  }
  if (o.reps == 0) throw UserError("bench nf: --reps must be at least 1");
  for (const auto& t : o.tables) {
    if (!with_table<FlowKeyV4>(t, [](auto) {})) throw UserError(fmt::format("bench nf: unknown table '{}'", t));
  }
  for (const auto& nf : o.nfs) {
    if (nf != "fwd" && nf != "slb" && nf != "lb" && nf != "nat") throw UserError(fmt::format("bench nf: unknown function '{}'", nf));
  }
  if (o.workers.empty()) {
    for (unsigned w = 1; w <= usable_cpus(); ++w) o.workers.push_back(w);
  }
  CampusProfile profile;
  profile.flows = o.flows;
  const PacketStore trace = multiply_trace(generate_campus(profile), {.windows = o.windows});
  const std::vector<ServiceConfig> services = campus_services(profile);
  StatefulLbConfig lb_config;
  lb_config.services = services;
  lb_config.policy = LbPolicy::maglev;
  lb_config.max_connections = static_cast<std::size_t>(o.flows) * o.windows;  // every connection fits in one worker
  const StatelessLbConfig slb_config{services, StatelessSelection::maglev, MaglevTable::kDefaultSize};
  NatConfig nat_config;  // the campus clients are the inside network
  nat_config.inside_network = to_network32(profile.client_network);
  nat_config.inside_prefix_length = profile.client_prefix_length;
  for (std::uint32_t i = 1; i <= 4; ++i) nat_config.pool.push_back(to_network32(0xcb007100 + i));  // 203.0.113.1-4
  nat_config.max_sessions = lb_config.max_connections;
  nat_config.max_mappings = lb_config.max_connections;

  if (!o.json) {
    fmt::print("flowtrack bench nf: campus {} connections x {} windows = {} packets, sharded workers, median of {} reps\n\n",
               o.flows, o.windows, trace.size(), o.reps);
    fmt::print("{:<5} {:<12} {:>3} {:>8} {:>9} {:>9}\n", "nf", "table", "wrk", "Mpps", "cyc/pkt", "vs fwd");
  }
  std::vector<Row> rows;
  std::map<unsigned, double> fwd_mpps;
  for (const unsigned workers : o.workers) {
    const PacketPartition partition = partition_by_rss(trace, RssSteering(workers));
    for (const auto& nf : o.nfs) {
      const std::vector<std::string> tables = nf == "lb" || nf == "nat" ? o.tables : std::vector<std::string>{"-"};
      for (const auto& table : tables) {
        Row row{nf, table, workers, {}, {}};
        for (unsigned rep = 0; rep < o.reps; ++rep) {
          std::vector<WorkerResult> results;
          if (nf == "fwd") {
            results = run_workers(trace, partition, workers, [](unsigned, Nanos) { return std::make_unique<Forwarder>(); },
                                  [](auto&, WorkerResult&) {});
          } else if (nf == "slb") {
            results = run_workers(trace, partition, workers, [&](unsigned, Nanos) { return std::make_unique<StatelessLb>(slb_config); },
                                  [](auto&, WorkerResult&) {});
          } else if (nf == "lb") {
            with_table<FlowKeyV4>(table, [&]<class Table>(std::type_identity<Table>) {
              results = run_workers(
                  trace, partition, workers, [&](unsigned, Nanos start) { return std::make_unique<StatefulLb<Table>>(lb_config, start); },
                  [](auto&, WorkerResult&) {});
            });
          } else {
            with_table<FlowKeyV4>(table, [&]<class Table>(std::type_identity<Table>) {
              results = run_workers(
                  trace, partition, workers,
                  [&](unsigned w, Nanos start) {
                    auto nat = std::make_unique<NatInsideReplay<Table>>(nat_config, w, workers, start);
                    nat->set_link(trace.link_type());
                    return nat;
                  },
                  [](auto&, WorkerResult&) {});
            });
          }
          row.mpps.push_back(aggregate_mpps(results));
          row.cycles.push_back(cycles_per_packet(results));
        }
        if (nf == "fwd") fwd_mpps[workers] = median(row.mpps);
        const double vs = fwd_mpps.contains(workers) ? median(row.mpps) / fwd_mpps[workers] : 0;
        if (o.json) {
          fmt::print("{}\n", nlohmann::json{{"nf", nf}, {"table", table}, {"workers", workers}, {"mpps", median(row.mpps)},
                                            {"cycles_per_packet", median(row.cycles)}, {"vs_fwd", vs},
                                            {"reps", o.reps}, {"packets", trace.size()}}
                                 .dump());
        } else {
          fmt::print("{:<5} {:<12} {:>3} {:>8.2f} {:>9.1f} {:>8.2f}x\n", nf, table, workers, median(row.mpps),
                     median(row.cycles), vs);
        }
        std::fflush(stdout);
        rows.push_back(std::move(row));
      }
    }
  }
  if (o.json) return;
  fmt::print("\nstateful LB, tables ranked by Mpps at {} worker(s) (same run):\n", o.workers.back());
  std::vector<const Row*> lb_rows;
  for (const Row& r : rows) {
    if (r.nf == "lb" && r.workers == o.workers.back()) lb_rows.push_back(&r);
  }
  std::sort(lb_rows.begin(), lb_rows.end(), [](const Row* a, const Row* b) { return median(a->mpps) > median(b->mpps); });
  for (std::size_t i = 0; i < lb_rows.size(); ++i) {
    fmt::print("  {}. {:<12} {:>7.2f} Mpps  {:>7.1f} cycles/packet\n", i + 1, lb_rows[i]->table, median(lb_rows[i]->mpps),
               median(lb_rows[i]->cycles));
  }
}

}  // namespace

void add_nf_bench(CLI::App& bench) {
  auto o = std::make_shared<NfBenchOptions>();
  auto* nf = bench.add_subcommand("nf", "Mpps of the network functions per table and worker count");
  nf->add_option("--nfs", o->nfs, "fwd, slb, lb, nat")->delimiter(',');
  nf->add_option("--tables", o->tables, "the connection tables of the stateful LB and the NAT")->delimiter(',');
  nf->add_option("--workers", o->workers, "worker counts (default: 1 .. usable cores)")->delimiter(',');
  nf->add_option("--flows", o->flows, "campus connections per window")->check(CLI::Range(1u, 5'000'000u));
  nf->add_option("--windows", o->windows, "shifted windows")->check(CLI::Range(1u, 255u));
  nf->add_option("--reps", o->reps, "repetitions (median reported)");
  nf->add_flag("--quick", o->quick, "small trace, four tables");
  nf->add_flag("--json", o->json, "one JSON object per line");
  nf->callback([o] { run_nf_bench(*o); });
}

}  // namespace flowtrack::cli
