// `flowtrack bench table`: TSC cycles per operation of every flow table, measured alike.
//
// For each table, size (capacity) and load: a fresh table is filled with load * size random FlowKeyV4
// keys (timed: insert), then timed lookups of present keys (hit) and absent keys (miss), single and in
// bursts of 32 through find_bulk (bulk), lookups drawn uniformly or by Zipf popularity; then a steady
// churn (erase a present key, insert a new one: one op = the pair, load unchanged) and finally erasing
// every key (erase). Hashes are CRC32C computed before any timing. Each figure is the median over
// --reps repetitions of (cycles of the whole loop / operations); p10 and p90 are kept in JSON.
// After each size, the memory system's limit at that size (lab/memory_limit.hpp) over the largest table
// it measured there: a line of its own in the text; in JSON, on every cell of the size, with the cell's
// cycles as a multiple of a line fetch (line_fetches), dependent for single operations and prefetched in
// batches for bulk ones.
#include <fmt/core.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "bench_table.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/lab/memory_limit.hpp"
#include "flowtrack/lab/registry.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/util/random.hpp"
#include "flowtrack/util/statistics.hpp"
#include "flowtrack/util/tsc.hpp"
#include "json_line.hpp"
#include "run_context.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

constexpr std::size_t kMaxQueries = 1 << 20;

struct Cell {
  std::string table, op, mode, dist;
  std::size_t size = 0;
  double load = 0;
  std::vector<double> samples;  // cycles per operation, one per repetition
  double bytes_per_flow = 0;
};

// The keys of one configuration: the inserted ones, absent ones, and the lookup streams.
struct Workload {
  std::vector<FlowKeyV4> present, absent, churn_in;
  std::vector<std::uint32_t> present_hash, absent_hash, churn_hash;
  std::vector<FlowKeyV4> hit_keys;
  std::vector<std::uint32_t> hit_hashes;
};

FlowKeyV4 random_key(Random& rng) {
  // One draw per statement, last field first: the order does not depend on the compiler (as it would for
  // draws passed as arguments) and stays the one GCC took before, so a seed gives the workloads it gave.
  const auto dport = static_cast<std::uint16_t>(rng.next());
  const auto sport = static_cast<std::uint16_t>(rng.next());
  const auto dst = static_cast<std::uint32_t>(rng.next());
  const auto src = static_cast<std::uint32_t>(rng.next());
  return FlowKeyV4::from_host(src, dst, sport, dport, ipproto::kTcp);
}

Workload make_workload(std::size_t entries, const std::string& dist, std::uint64_t seed) {
  Random rng(seed);
  Workload w;
  auto fill = [&](std::vector<FlowKeyV4>& keys, std::vector<std::uint32_t>& hashes, std::size_t n) {
    keys.resize(n);
    hashes.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = random_key(rng);
      hashes[i] = flow_hash(keys[i]);
    }
  };
  fill(w.present, w.present_hash, entries);
  const std::size_t queries = std::min(kMaxQueries, std::max<std::size_t>(entries, kDefaultBurst * 64));
  fill(w.absent, w.absent_hash, queries);  // random 96-bit-plus tuples: absent with overwhelming odds
  fill(w.churn_in, w.churn_hash, std::min(entries, queries));
  std::vector<double> cdf;
  if (dist == "zipf") {
    cdf.resize(entries);
    double total = 0;
    for (std::size_t k = 0; k < entries; ++k) cdf[k] = total += 1.0 / static_cast<double>(k + 1);
  }
  w.hit_keys.resize(queries);
  w.hit_hashes.resize(queries);
  for (std::size_t q = 0; q < queries; ++q) {
    std::size_t pick = rng.below(entries);
    if (!cdf.empty()) {
      pick = static_cast<std::size_t>(std::upper_bound(cdf.begin(), cdf.end(), rng.unit() * cdf.back()) - cdf.begin());
      pick = std::min(pick, entries - 1);
    }
    w.hit_keys[q] = w.present[pick];
    w.hit_hashes[q] = w.present_hash[pick];
  }
  return w;
}

// Everything the timed loops produce goes here, so the compiler cannot drop the work.
volatile std::uint64_t g_sink;

// Times `ops` operations done by `work` in TSC cycles per operation. Under callgrind (see
// scripts/callgrind-tables.sh) it also dumps the instruction count of exactly this loop, labelled; the
// client requests sit outside the timed region and are a few no-op instructions otherwise.
template <class Work>
double cycles_per_op(const std::string& label, std::size_t ops, Work&& work) {
  CALLGRIND_ZERO_STATS;
  const std::uint64_t start = tsc_begin();
  work();
  const std::uint64_t cycles = tsc_end() - start;
  const std::string dump_label = fmt::format("{} ops={}", label, ops);
  CALLGRIND_DUMP_STATS_AT(dump_label.c_str());
  return static_cast<double>(cycles) / static_cast<double>(ops);
}

template <class Table>
double time_lookups(const std::string& label, const Table& table, const std::vector<FlowKeyV4>& keys,
                    const std::vector<std::uint32_t>& hashes, bool bulk) {
  std::uint64_t acc = 0;
  const std::size_t ops = bulk ? keys.size() / kDefaultBurst * kDefaultBurst : keys.size();
  const double cycles = cycles_per_op(label, ops, [&] {
    if (bulk) {
      std::array<FlowId, kDefaultBurst> ids;
      for (std::size_t i = 0; i + kDefaultBurst <= keys.size(); i += kDefaultBurst) {
        acc += table.find_bulk(std::span(keys).subspan(i, kDefaultBurst), std::span(hashes).subspan(i, kDefaultBurst), ids);
        acc += ids[0];
      }
    } else {
      for (std::size_t i = 0; i < keys.size(); ++i) acc += table.find(keys[i], hashes[i]);
    }
  });
  g_sink = acc;
  return cycles;
}

bool wants(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// One repetition of one configuration; nullopt when the table cannot hold the requested load.
// A table with lazy expiry (Cuckoo++) runs with its stamps live, as a tracker would use it; the clock
// stands still, so nothing expires and every lookup pays for the stamp check.
template <class Table>
std::optional<std::map<std::string, double>> run_once(std::size_t size, const Workload& w, const TableBenchOptions& o,
                                                      double& bytes_per_flow) {
  auto table = std::make_unique<Table>(size);
  if constexpr (requires { table->enable_expiry(std::uint64_t{0}); }) table->enable_expiry(0);
  const std::string label = fmt::format("table={} size={} load={:.2f} dist={}", Table::kName, size,
                                        static_cast<double>(w.present.size()) / static_cast<double>(size), o.dist);
  auto op_label = [&](const std::string& key) { return fmt::format("{} cell={}", label, key); };
  std::map<std::string, double> cycles;
  bool all_inserted = true;
  cycles["insert/single"] = cycles_per_op(op_label("insert/single"), w.present.size(), [&] {
    for (std::size_t i = 0; i < w.present.size() && all_inserted; ++i) {
      all_inserted = table->insert(w.present[i], w.present_hash[i]).ok();
    }
  });
  if (!all_inserted) return std::nullopt;
  bytes_per_flow = static_cast<double>(table->memory_bytes()) / static_cast<double>(w.present.size());
  for (const std::string mode : {"single", "bulk"}) {
    if (!wants(o.modes, mode)) continue;
    if (wants(o.ops, "hit")) {
      cycles["hit/" + mode] = time_lookups(op_label("hit/" + mode), *table, w.hit_keys, w.hit_hashes, mode == "bulk");
    }
    if (wants(o.ops, "miss")) {
      cycles["miss/" + mode] = time_lookups(op_label("miss/" + mode), *table, w.absent, w.absent_hash, mode == "bulk");
    }
  }
  if (wants(o.ops, "churn")) {
    // Erase the i-th present key and insert a new one in its place: the load stays where it was.
    const std::size_t n = w.churn_in.size();
    cycles["churn/single"] = cycles_per_op(op_label("churn/single"), n, [&] {
      for (std::size_t i = 0; i < n && all_inserted; ++i) {
        table->erase(w.present[i], w.present_hash[i]);
        all_inserted = table->insert(w.churn_in[i], w.churn_hash[i]).ok();
      }
    });
    if (!all_inserted) return std::nullopt;
    for (std::size_t i = 0; i < n; ++i) {  // restore the original contents for the erase pass
      table->erase(w.churn_in[i], w.churn_hash[i]);
      table->insert(w.present[i], w.present_hash[i]);
    }
  }
  std::uint64_t erased = 0;
  cycles["erase/single"] = cycles_per_op(op_label("erase/single"), w.present.size(), [&] {
    for (std::size_t i = 0; i < w.present.size(); ++i) erased += table->erase(w.present[i], w.present_hash[i]);
  });
  g_sink = erased;
  return cycles;
}

// A line fetch's cost for a cell: dependent for single operations, in prefetched batches for bulk ones.
double line_fetch_cycles(const Cell& c, const MemoryLimit& limit) {
  return c.mode == "bulk" ? limit.batched_cycles_per_line : limit.dependent_cycles_per_line;
}

void print_json(const Cell& c, const MemoryLimit& limit) {
  JsonObject()
      .set("table", c.table)
      .set("op", c.op)
      .set("mode", c.mode)
      .set("size", c.size)
      .set("load", c.load)
      .set("dist", c.dist)
      .set("reps", c.samples.size())
      .set("cycles", median(c.samples))
      .set("p10", quantile(c.samples, 0.1))
      .set("p90", quantile(c.samples, 0.9))
      .set("bytes_per_flow", c.bytes_per_flow)
      .set("line_fetches", median(c.samples) / line_fetch_cycles(c, limit))
      .set("memory_working_set_bytes", limit.working_set_bytes)
      .set("memory_dependent_cycles_per_line", limit.dependent_cycles_per_line)
      .set("memory_batched_cycles_per_line", limit.batched_cycles_per_line)
      .set("memory_batch", limit.batch)
      .print_line();
}

void print_text(const MemoryLimit& limit) {
  fmt::print("{:<15} {:>9.1f} MiB: a dependent line fetch {:.1f} cycles ({:.1f} ns), in prefetched batches of {} {:.1f} "
             "cycles a line ({:.1f} ns)\n",
             "memory limit", static_cast<double>(limit.working_set_bytes) / (1 << 20), limit.dependent_cycles_per_line,
             limit.dependent_ns_per_line(), limit.batch, limit.batched_cycles_per_line, limit.batched_ns_per_line());
}

// The memory limit over the largest working set a size's tables took (at least a page).
MemoryLimit probe_size_limit(const std::vector<Cell>& size_cells, unsigned reps) {
  MemoryLimitOptions options;
  options.working_set_bytes = 4096;
  for (const Cell& c : size_cells) {
    const double bytes = c.bytes_per_flow * static_cast<double>(c.size) * c.load;
    options.working_set_bytes = std::max(options.working_set_bytes, static_cast<std::size_t>(bytes));
  }
  options.batch = kDefaultBurst;
  options.reps = static_cast<int>(reps);
  return probe_memory_limit(options);
}

}  // namespace

void run_table_bench(TableBenchOptions o) {
  if (o.quick) {
    o.sizes = {1 << 16, 1 << 20};
    o.loads = {0.5, 0.9};
    o.reps = std::min(o.reps, 3u);
  }
  if (o.tables.empty()) o.tables = table_names();
  for (const auto& name : o.tables) {
    if (!with_table<FlowKeyV4>(name, [](auto) {})) throw UserError(fmt::format("bench table: {}", unknown_table_message(name)));
  }
  if (o.dist != "uniform" && o.dist != "zipf") throw UserError("bench table: --dist is uniform or zipf");
  if (o.reps == 0) throw UserError("bench table: --reps must be at least 1");

  std::vector<Cell> cells;
  std::map<std::size_t, MemoryLimit> limits;  // by size
  std::vector<std::string> unreachable;
  if (o.json) {
    print_run_context(false);
  } else {
    fmt::print("flowtrack bench table: TSC at {:.2f} GHz, median of {} reps, {} lookups, FlowKeyV4\n\n",
               tsc_hz() / 1e9, o.reps, o.dist);
    fmt::print("{:<15} {:>9} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "table", "size", "load",
               "insert", "hit", "hit/bulk", "miss", "miss/blk", "churn", "erase", "B/flow");
  }
  for (std::size_t size : o.sizes) {
    const std::size_t first_of_size = cells.size();
    for (double load : o.loads) {
      const auto entries = static_cast<std::size_t>(static_cast<double>(size) * load);
      if (entries == 0) continue;
      const Workload workload = make_workload(entries, o.dist, size * 1000 + static_cast<std::size_t>(load * 100));
      for (const auto& name : o.tables) {
        std::map<std::string, Cell> by_op;
        bool reachable = true;
        with_table<FlowKeyV4>(name, [&]<class Table>(std::type_identity<Table>) {
          for (unsigned rep = 0; rep < o.reps && reachable; ++rep) {
            double bytes_per_flow = 0;
            const auto result = run_once<Table>(size, workload, o, bytes_per_flow);
            if (!result) {
              reachable = false;
              break;
            }
            for (const auto& [key, cycles] : *result) {
              Cell& cell = by_op[key];
              cell.table = name;
              cell.op = key.substr(0, key.find('/'));
              cell.mode = key.substr(key.find('/') + 1);
              cell.size = size;
              cell.load = load;
              cell.dist = o.dist;
              cell.bytes_per_flow = bytes_per_flow;
              cell.samples.push_back(cycles);
            }
          }
        });
        if (!reachable) {
          unreachable.push_back(fmt::format("{} cannot hold load {} at size {}", name, load, size));
          if (o.json) {
            JsonObject().set("table", name).set("size", size).set("load", load).set("error", "load not reachable").print_line();
          } else {
            fmt::print("{:<15} {:>9} {:>5.2f}  insert failed before this load\n", name, size, load);
          }
          continue;
        }
        auto value = [&](const std::string& key) {
          return by_op.contains(key) && wants(o.ops, key.substr(0, key.find('/'))) ? fmt::format("{:.1f}", median(by_op[key].samples)) : std::string("-");
        };
        if (!o.json) {
          fmt::print("{:<15} {:>9} {:>5.2f} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8.1f}\n", name, size, load,
                     value("insert/single"), value("hit/single"), value("hit/bulk"), value("miss/single"),
                     value("miss/bulk"), value("churn/single"), value("erase/single"),
                     by_op.begin()->second.bytes_per_flow);
          std::fflush(stdout);
        }
        for (auto& [key, cell] : by_op) {
          if (wants(o.ops, cell.op)) cells.push_back(std::move(cell));
        }
      }
    }
    const std::vector<Cell> size_cells(cells.begin() + static_cast<std::ptrdiff_t>(first_of_size), cells.end());
    if (size_cells.empty()) continue;
    const MemoryLimit& limit = limits[size] = probe_size_limit(size_cells, o.reps);
    if (o.json) {
      for (const Cell& cell : size_cells) print_json(cell, limit);
    } else {
      print_text(limit);
      std::fflush(stdout);
    }
  }
  if (o.json) return;

  // Headline ratios, from this run's medians only.
  auto find_cell = [&](const std::string& table, const std::string& op, const std::string& mode, std::size_t size,
                       double load) -> const Cell* {
    for (const Cell& c : cells) {
      if (c.table == table && c.op == op && c.mode == mode && c.size == size && std::abs(c.load - load) < 1e-9) return &c;
    }
    return nullptr;
  };
  fmt::print("\nheadline ratios (this run):\n");
  for (std::size_t size : o.sizes) {
    for (double load : o.loads) {
      if (load < 0.9 - 1e-9) continue;
      const Cell* ours = find_cell("cuckoo", "hit", "bulk", size, load);
      const Cell* dpdk = find_cell("dpdk", "hit", "bulk", size, load);
      for (const char* name : {"cuckoo", "cuckoo-prefetch2", "cuckoopp"}) {
        const Cell* mine = find_cell(name, "hit", "bulk", size, load);
        if (mine && dpdk) {
          const double batched = limits.at(size).batched_cycles_per_line;
          fmt::print("  {} bulk hit vs dpdk bulk hit, size {} load {:.2f}: {:.2f}x faster ({:.1f} vs {:.1f} cycles: {:.2f} "
                     "and {:.2f} batched line fetches)\n",
                     name, size, load, median(dpdk->samples) / median(mine->samples), median(mine->samples),
                     median(dpdk->samples), median(mine->samples) / batched, median(dpdk->samples) / batched);
        }
      }
      const Cell* swiss = find_cell("swiss", "hit", "single", size, load);
      if (ours && swiss) {
        fmt::print("  cuckoo bulk hit vs swiss (abseil) find, size {} load {:.2f}: {:.2f}x faster\n", size, load,
                   median(swiss->samples) / median(ours->samples));
      }
    }
  }
  for (const auto& name : o.tables) {
    for (std::size_t size : o.sizes) {
      const double load = o.loads.back();
      const Cell* hit = find_cell(name, "hit", "single", size, load);
      const Cell* miss = find_cell(name, "miss", "single", size, load);
      if (hit && miss) {
        fmt::print("  {:<15} size {:>9} load {:.2f}: miss/hit {:.2f}, {:.1f} bytes per flow\n", name, size, load,
                   median(miss->samples) / median(hit->samples), hit->bytes_per_flow);
      }
    }
  }
  for (const auto& line : unreachable) fmt::print("  note: {}\n", line);
}

}  // namespace flowtrack::cli
