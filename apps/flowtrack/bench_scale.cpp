// `flowtrack bench scale`: packets per second of the per-core runtime for every scaling strategy and
// table, from 1 worker to as many as there are cores, on a campus-like trace multiplied by shifted
// windows (or a pcap). Each configuration runs --reps times; Mpps and cycles per packet are medians.
// Reported per strategy and table: the ratio of the largest worker count to 1 worker.
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "bench_scale.hpp"
#include "json_line.hpp"
#include "run_context.hpp"
#include "user_error.hpp"
#include "worker_limit.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/lab/scale_run.hpp"
#include "flowtrack/util/statistics.hpp"
#include "scale_grid.hpp"

namespace flowtrack::cli {
namespace {

// What each strategy runs on when --tables is not given (of this build's grid).
std::vector<std::string> default_tables(const std::string& strategy, bool quick) {
  if (strategy == "sharded") {
    if (quick) return grid_subset({"cuckoo", "dpdk", "chained"}, GridUse::functions);
    return grid_subset({"cuckoo", "cuckoopp", "dpdk", "chained", "stdmap", "swiss", "hopscotch", "robinhood"}, GridUse::functions);
  }
  if (strategy == "spinlock" || strategy == "spinlock-packet" || strategy == "rwlock") {
    if (quick) return grid_subset({"cuckoo"}, GridUse::functions);
    return grid_subset({"cuckoo", "dpdk", "chained", "swiss"}, GridUse::functions);
  }
  if (strategy == "striped") return {"chained"};
#ifdef FLOWTRACK_WITH_DPDK
  if (strategy == "lockfree") return quick ? std::vector<std::string>{"cuckoo-lf"} : std::vector<std::string>{"cuckoo-lf", "dpdk-lf"};
#else
  if (strategy == "lockfree") return {"cuckoo-lf"};
#endif
  if (strategy == "concurrent") return {"libcuckoo"};
  return {};
}

struct ScaleRow {
  std::string strategy, steering, table;
  unsigned workers = 0;
  std::vector<double> mpps, cycles;
  ScaleReport last;
};

// Calls fn(std::integral_constant<Strategy, S>{}) for the S that s names at run time: the one switch
// from the runtime choice to the compile-time strategy.
template <class Fn>
decltype(auto) with_strategy_constant(Strategy s, Fn&& fn) {
  switch (s) {
    case Strategy::sharded: return fn(std::integral_constant<Strategy, Strategy::sharded>{});
    case Strategy::spinlock: return fn(std::integral_constant<Strategy, Strategy::spinlock>{});
    case Strategy::spinlock_packet: return fn(std::integral_constant<Strategy, Strategy::spinlock_packet>{});
    case Strategy::rwlock: return fn(std::integral_constant<Strategy, Strategy::rwlock>{});
    case Strategy::striped: return fn(std::integral_constant<Strategy, Strategy::striped>{});
    case Strategy::lockfree: return fn(std::integral_constant<Strategy, Strategy::lockfree>{});
    case Strategy::concurrent: break;
  }
  return fn(std::integral_constant<Strategy, Strategy::concurrent>{});
}

// Whether strategy s applies to the named table, and one run of it (scale_grid.hpp).
bool strategy_applies(Strategy s, std::string_view table) {
  return with_strategy_constant(s, [&]<Strategy S>(std::integral_constant<Strategy, S>) {
    return with_strategy<FlowKeyV4, S>(table, [](auto, auto) {});
  });
}

ScaleReport run_strategy(Strategy s, std::string_view table, const PacketStore& trace, const ScaleRunOptions& options) {
  return with_strategy_constant(s, [&]<Strategy S>(std::integral_constant<Strategy, S>) {
    return run_scale_config<S>(table, trace, options);
  });
}

PacketStore load_trace(const ScaleBenchOptions& o) {
  if (!o.pcap.empty()) return PacketStore::load_pcap(o.pcap);
  CampusProfile profile;
  profile.flows = o.flows;
  return multiply_trace(generate_campus(profile), {.windows = o.windows});
}

void print_row(const ScaleRow& r, bool json) {
  const ScaleReport& rep = r.last;
  const double mpps = median(r.mpps);
  const double cycles = median(r.cycles);
  auto split = [&](NfStage s) { return rep.stage_cycles_per_packet(s); };
  if (json) {
    JsonObject j;
    j.set("strategy", r.strategy)
        .set("steering", r.steering)
        .set("table", r.table)
        .set("workers", r.workers)
        .set("mpps", mpps)
        .set("cycles_per_packet", cycles)
        .set("reps", r.mpps.size())
        .set("mpps_min", *std::min_element(r.mpps.begin(), r.mpps.end()))
        .set("mpps_max", *std::max_element(r.mpps.begin(), r.mpps.end()))
        .set("load", rep.load())
        .set("packets", rep.total.packets)
        .set("new_flows", rep.total.function.connections_created)
        .set("drops", rep.total.drops())
        .set("dispatcher_core", rep.dispatcher)
        .set("oversubscribed", rep.oversubscribed);
    for (const NfStage s : {NfStage::parse, NfStage::lookup, NfStage::state, NfStage::aging}) {
      j.set("cycles_" + std::string(nf_stage_name(s)), split(s));
    }
    std::vector<double> per_worker;
    for (std::size_t w = 0; w < rep.workers.size(); ++w) per_worker.push_back(rep.worker_mpps(w));
    j.set("worker_mpps", per_worker).print_line();
  } else {
    fmt::print("{:<10} {:<8} {:<16} {:>3} {:>8.2f} {:>8.1f} {:>7.1f} {:>7.1f} {:>7.1f} {:>7.1f} {:>5.2f} {:>7}{}\n",
               r.strategy, r.steering, r.table, r.workers, mpps, cycles, split(NfStage::parse), split(NfStage::lookup),
               split(NfStage::state), split(NfStage::aging), rep.load(), rep.total.drops(),
               rep.oversubscribed ? "  (oversubscribed)" : (rep.dispatcher ? "  (+1 dispatcher core)" : ""));
  }
  std::fflush(stdout);
}

}  // namespace

void run_scale_bench(ScaleBenchOptions o) {
  if (o.quick) {
    o.flows = std::min<std::uint32_t>(o.flows, 5'000);
    o.windows = std::min(o.windows, 4u);
    o.passes = std::min(o.passes, 3u);
    o.reps = std::min(o.reps, 3u);
  }
  if (o.strategies.empty()) o.strategies = strategy_names();
  if (o.reps == 0 || o.passes == 0) throw UserError("bench scale: --reps and --passes must be at least 1");
  if (!(o.load > 0 && o.load <= 1)) throw UserError("bench scale: --load must be in (0, 1]");
  const unsigned cores = usable_cpus();
  if (o.workers.empty()) {
    for (unsigned w = 1; w <= std::min(cores, kMaxWorkers); ++w) o.workers.push_back(w);
  }
  for (unsigned w : o.workers) check_workers("bench scale", w);
  // Validate every combination before the long run starts.
  for (const auto& strategy : o.strategies) {
    const auto tables = o.tables.empty() ? default_tables(strategy, o.quick) : o.tables;
    if (tables.empty()) throw UserError(fmt::format("bench scale: unknown strategy '{}'", strategy));
    for (const auto& table : tables) {
      if (!strategy_applies(*strategy_of(strategy), table)) {
        if (table_concurrency(table) && !in_grid(table, GridUse::functions)) {
          throw UserError(fmt::format("bench scale: {}", unknown_table_message(table, GridUse::functions)));
        }
        throw UserError(fmt::format("bench scale: strategy '{}' does not apply to table '{}'", strategy, table));
      }
    }
  }

  const PacketStore trace = load_trace(o);
  if (o.json) {
    print_run_context(true);
  } else {
    fmt::print("flowtrack bench scale: {} packets ({}), {} passes, {} usable cores, TSC {:.2f} GHz, median of {} reps\n",
               trace.size(), o.pcap.empty() ? fmt::format("campus {} flows x {} windows", o.flows, o.windows) : o.pcap,
               o.passes, cores, tsc_hz() / 1e9, o.reps);
    fmt::print("aging: {}; cycles are per packet per worker, by stage of the burst loop (parse; lookup; state: inserts "
               "and accounting; aging)\n\n",
               o.timeout_ms > 0 ? fmt::format("timer wheel, {} ms timeout", o.timeout_ms) : "off");
    fmt::print("{:<10} {:<8} {:<16} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>5} {:>7}\n", "strategy", "steering",
               "table", "wrk", "Mpps", "cyc/pkt", "parse", "lookup", "state", "aging", "load", "drops");
  }

  std::vector<ScaleRow> rows;
  auto run_config = [&](const std::string& strategy, const std::string& table, Steering steering, unsigned workers) {
    ScaleRunOptions options;
    options.workers = workers;
    options.steering = steering;
    options.passes = o.passes;
    options.load = o.load;
    if (o.timeout_ms > 0) {
      options.aging.timeout = static_cast<Nanos>(o.timeout_ms * 1e6);
      options.aging.tick = std::max<Nanos>(options.aging.timeout / 64, kNanosPerMicro);
    }
    ScaleRow row{strategy, steering == Steering::hardware ? "hw" : "sw", table, workers, {}, {}, {}};
    for (unsigned rep = 0; rep < o.reps; ++rep) {
      row.last = run_strategy(*strategy_of(strategy), table, trace, options);
      row.mpps.push_back(row.last.mpps());
      row.cycles.push_back(row.last.cycles_per_packet());
    }
    print_row(row, o.json);
    rows.push_back(std::move(row));
  };

  for (const auto& strategy : o.strategies) {
    const auto tables = o.tables.empty() ? default_tables(strategy, o.quick) : o.tables;
    for (const auto& table : tables) {
      for (unsigned workers : o.workers) run_config(strategy, table, Steering::hardware, workers);
      if (strategy == "sharded" && o.software) {
        // The dispatcher takes a core of its own: only worker counts that leave it one.
        for (unsigned workers : o.workers) {
          if (workers + 1 <= cores) run_config(strategy, table, Steering::software, workers);
        }
      }
    }
  }
  if (o.json) return;

  fmt::print("\nscaling (median Mpps at the most workers / at 1 worker, same run):\n");
  std::map<std::tuple<std::string, std::string, std::string>, std::map<unsigned, double>> by_config;
  for (const ScaleRow& r : rows) by_config[{r.strategy, r.steering, r.table}][r.workers] = median(r.mpps);
  for (const auto& [key, by_workers] : by_config) {
    const auto& [strategy, steering, table] = key;
    if (by_workers.size() < 2 || !by_workers.contains(1)) continue;
    const auto& [most, mpps] = *by_workers.rbegin();
    fmt::print("  {:<10} {:<3} {:<16} {}w/1w = {:.2f}x\n", strategy, steering, table, most, mpps / by_workers.at(1));
  }
  const auto sharded = by_config.find({"sharded", "hw", "cuckoo"});
  if (sharded != by_config.end() && sharded->second.contains(1)) {
    fmt::print("\nagainst sharded cuckoo at the same worker count:\n");
    for (const auto& [key, by_workers] : by_config) {
      const auto& [strategy, steering, table] = key;
      for (const auto& [workers, mpps] : by_workers) {
        if (sharded->second.contains(workers) && key != sharded->first) {
          fmt::print("  {:<10} {:<3} {:<16} {}w: {:.2f}x\n", strategy, steering, table, workers, mpps / sharded->second.at(workers));
        }
      }
    }
  }
}

}  // namespace flowtrack::cli
