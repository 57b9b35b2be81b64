// `flowtrack bench nf`: packets per second of each network function (the NAT replaying the trace as
// captured inside, nat_replay.hpp) on the campus trace multiplied by shifted windows, for every
// connection table, tracker aging and scaling of the stateful ones, on 1..N workers (nf_runner.hpp),
// median of --reps. Reports each function against the forwarder measured in the same run (seed 000:
// the stateless LB ran ~60 % faster than the stateful one), ranks the stateful LB's configurations and
// sets each shared (spinlock) configuration against its sharded twin.
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "bench_nf.hpp"
#include "json_line.hpp"
#include "user_error.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/table/registry.hpp"
#include "nf_launch.hpp"

namespace flowtrack::cli {
namespace {

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
  NfChoice choice;
  std::vector<double> mpps, cycles;
};

// The stateful LB's configurations ranked at the largest worker count, and every shared (spinlock)
// configuration against its sharded twin: all from this run's medians.
void print_summary(const std::vector<Row>& rows, unsigned workers) {
  std::vector<const Row*> lb_rows;
  for (const Row& r : rows) {
    if (r.choice.nf == "lb" && r.choice.workers == workers) lb_rows.push_back(&r);
  }
  std::ranges::sort(lb_rows, [](const Row* a, const Row* b) { return median(a->mpps) > median(b->mpps); });
  if (!lb_rows.empty()) fmt::print("\nstateful LB ranked by Mpps at {} worker(s) (same run):\n", workers);
  for (std::size_t i = 0; i < lb_rows.size(); ++i) {
    const NfChoice& c = lb_rows[i]->choice;
    fmt::print("  {:>2}. {:<12} {:<6} {:<9} {:>7.2f} Mpps  {:>7.1f} cycles/packet\n", i + 1, c.table, c.aging, c.scaling,
               median(lb_rows[i]->mpps), median(lb_rows[i]->cycles));
  }
  bool header = false;
  for (const Row& shared : rows) {
    if (shared.choice.scaling != "spinlock") continue;
    for (const Row& sharded : rows) {
      const NfChoice& a = shared.choice;
      const NfChoice& b = sharded.choice;
      if (b.scaling != "sharded" || a.nf != b.nf || a.table != b.table || a.aging != b.aging || a.workers != b.workers) continue;
      if (!header) fmt::print("\none shared instance under a spinlock / one instance per worker (Mpps, same run):\n");
      header = true;
      fmt::print("  {:<4} {:<12} {:<6} {} worker(s): {:.2f}x\n", a.nf, a.table, a.aging, a.workers,
                 median(shared.mpps) / median(sharded.mpps));
    }
  }
}

}  // namespace

void run_nf_bench(NfBenchOptions o) {
  if (o.quick) {
    o.flows = std::min<std::uint32_t>(o.flows, 5'000);
    o.windows = std::min(o.windows, 2u);
    o.reps = std::min(o.reps, 3u);
  }
  if (o.tables.empty()) {
    o.tables = o.quick ? grid_subset({"cuckoo", "dpdk", "chained", "stdmap"})
                       : grid_subset({"cuckoo", "cuckoopp", "dpdk", "chained", "robinhood", "hopscotch", "swiss", "stdmap"});
  }
  if (o.reps == 0) throw UserError("bench nf: --reps must be at least 1");
  // Names are checked before anything runs, so a typo fails at once rather than after minutes.
  const auto check = [](const std::vector<std::string>& asked, const std::vector<std::string>& known, std::string_view what) {
    for (const auto& name : asked) {
      if (std::ranges::find(known, name) == known.end()) throw UserError(fmt::format("bench nf: unknown {} '{}'", what, name));
    }
  };
  check(o.nfs, nf_names(), "function");
  for (const auto& table : o.tables) {
    if (!in_grid(table) || !table_concurrency(table)) throw UserError(fmt::format("bench nf: {}", unknown_table_message(table)));
  }
  check(o.agings, nf_aging_names(), "aging");
  check(o.scalings, nf_scaling_names(), "scaling");
  if (o.workers.empty()) {
    for (unsigned w = 1; w <= usable_cpus(); ++w) o.workers.push_back(w);
  }
  CampusProfile profile;
  profile.flows = o.flows;
  const PacketStore trace = multiply_trace(generate_campus(profile), {.windows = o.windows});
  NfConfigs configs;
  configs.lb.services = campus_services(profile);
  configs.lb.policy = LbPolicy::maglev;
  configs.lb.max_connections = static_cast<std::size_t>(o.flows) * o.windows;  // every connection fits in one instance
  configs.slb = {configs.lb.services, StatelessSelection::maglev, MaglevTable::kDefaultSize};
  // The campus clients are the inside network: window i moves them to 10.i.x.y (trace_multiplier.hpp),
  // so 10.0.0.0/8 holds every window's clients and every connection is translated.
  configs.nat.inside_network = to_network32(profile.client_network & 0xff000000u);
  configs.nat.inside_prefix_length = 8;
  for (std::uint32_t i = 1; i <= 4; ++i) configs.nat.pool.push_back(to_network32(0xcb007100 + i));  // 203.0.113.1-4
  configs.nat.max_sessions = configs.lb.max_connections;
  configs.nat.max_mappings = configs.lb.max_connections;

  // Every configuration to measure, in the order printed: per worker count, the forwarder first (the
  // anchor of the ratios), then each function; the stateful ones by table, aging and scaling.
  std::vector<NfChoice> choices;
  for (const unsigned workers : o.workers) {
    for (const auto& nf : o.nfs) {
      if (nf == "fwd" || nf == "slb") {
        choices.push_back({nf, "-", "-", "sharded", workers});
        continue;
      }
      for (const auto& table : o.tables) {
        for (const auto& aging : o.agings) {
          for (const auto& scaling : o.scalings) choices.push_back({nf, table, aging, scaling, workers});
        }
      }
    }
  }
  if (!o.json) {
    fmt::print("flowtrack bench nf: campus {} connections x {} windows = {} packets, median of {} reps\n\n",
               o.flows, o.windows, trace.size(), o.reps);
    fmt::print("{:<5} {:<12} {:<6} {:<9} {:>3} {:>8} {:>9} {:>9}\n", "nf", "table", "aging", "scaling", "wrk", "Mpps",
               "cyc/pkt", "vs fwd");
  }
  std::vector<Row> rows;
  std::map<unsigned, double> fwd_mpps;
  unsigned partitioned_for = 0;
  PacketPartition partition;
  for (const NfChoice& choice : choices) {
    if (partitioned_for != choice.workers) {
      partition = partition_by_rss(trace, RssSteering(choice.workers));
      partitioned_for = choice.workers;
    }
    Row row{choice, {}, {}};
    for (unsigned rep = 0; rep < o.reps; ++rep) {
      std::vector<WorkerResult> results;
      try {
        results = run_nf(choice, configs, trace, partition);
      } catch (const UserError& e) {
        throw UserError(fmt::format("bench nf: {}", e.what()));
      }
      row.mpps.push_back(aggregate_mpps(results));
      row.cycles.push_back(cycles_per_packet(results));
    }
    if (choice.nf == "fwd") fwd_mpps[choice.workers] = median(row.mpps);
    const double vs = fwd_mpps.contains(choice.workers) ? median(row.mpps) / fwd_mpps[choice.workers] : 0;
    if (o.json) {
      JsonObject()
          .set("nf", choice.nf)
          .set("table", choice.table)
          .set("aging", choice.aging)
          .set("scaling", choice.scaling)
          .set("workers", choice.workers)
          .set("mpps", median(row.mpps))
          .set("cycles_per_packet", median(row.cycles))
          .set("vs_fwd", vs)
          .set("reps", o.reps)
          .set("packets", trace.size())
          .print_line();
    } else {
      fmt::print("{:<5} {:<12} {:<6} {:<9} {:>3} {:>8.2f} {:>9.1f} {:>8.2f}x\n", choice.nf, choice.table, choice.aging,
                 choice.scaling, choice.workers, median(row.mpps), median(row.cycles), vs);
    }
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }
  if (o.json) return;
  print_summary(rows, o.workers.back());
}
}  // namespace flowtrack::cli
