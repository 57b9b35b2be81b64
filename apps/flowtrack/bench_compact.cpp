// `flowtrack bench compact`: the compact structures (Othello, Ludo, Cuckoo Filtable) and the three
// load-balancer lookup structures (Concury, a Maglev-style digest table, a SilkRoad-style multi-level
// digest table) at sizes from 1K to 16M keys: bits per key against the thesis's formulas, lookup Mqps
// single and bulk (one thread), update Mops, construction time. Each figure is the median over --reps
// repetitions; the ratios printed at the end come from this run only, the last of them (Concury
// against the Maglev-style table) from bulk lookups timed in alternation. See labkit/src/compact_bench_runs.cpp for
// what each repetition does.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>

#include "bench_compact.hpp"
#include "json_line.hpp"
#include "run_context.hpp"
#include "user_error.hpp"
#include "flowtrack/lab/compact_bench_runs.hpp"
#include "flowtrack/util/statistics.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack::cli {
namespace {

struct Summary {
  std::string structure;
  CompactBenchSetup setup;
  std::vector<CompactRep> reps;

  double med(double CompactRep::*field) const {
    std::vector<double> v;
    for (const auto& r : reps) v.push_back(r.*field);
    return median(v);
  }
};

// Concury under load, one line per arrival rate: medians over the repetitions, the ratio to the static
// lookups of the same repetition.
void print_dynamic(const Summary& s, bool json) {
  for (std::size_t i = 0; i < s.reps.front().dynamic.size(); ++i) {
    std::vector<double> mqps, static_mqps, ratio;
    for (const auto& r : s.reps) {
      mqps.push_back(r.dynamic[i].mqps);
      static_mqps.push_back(r.dynamic[i].static_mqps);
      ratio.push_back(r.dynamic[i].mqps / r.dynamic[i].static_mqps);
    }
    const DynamicPoint& last = s.reps.back().dynamic[i];
    if (json) {
      JsonObject j;
      j.set("structure", s.structure)
          .set("keys", s.setup.keys)
          .set("mode", "dynamic")
          .set("arrivals_per_s", last.arrivals_per_second)
          .set("lookup_mqps", median(mqps))
          .set("static_mqps", median(static_mqps))
          .set("vs_static", median(ratio))
          .set("seconds", s.setup.dynamic_seconds)
          .set("dip_change_every_s", s.setup.dip_change_every)
          .set("control_plane", s.setup.control_thread ? "own-thread" : "same-core")
          .set("population", s.setup.departures ? "steady" : "growing")
          .set("dip_changes", last.dip_changes)
          .set("learnt", last.learnt)
          .set("departed", last.departed)
          .set("reports_behind", last.reports_behind)
          .set("late_reports", last.late_reports)
          .set("repaired_reports", last.repaired_reports)
          .set("elapsed_s", last.elapsed_seconds)
          .set("control_busy_s", last.control_busy_seconds)
          .set("reps", s.reps.size())
          .print_line();
    } else {
      fmt::print("  under load: {:>9} connections, {:>8.0f} arrivals/s, a DIP change every {:.0f} s: {:>7.2f} Mqps bulk, "
                 "{:.2f}x static ({:.2f} Mqps); control plane: {} learnt, {} departed, {} behind, {} late ({} repaired), {} DIP "
                 "changes\n",
                 s.setup.keys, last.arrivals_per_second, s.setup.dip_change_every, median(mqps), median(ratio),
                 median(static_mqps), last.learnt, last.departed, last.reports_behind, last.late_reports,
                 last.repaired_reports, last.dip_changes);
    }
  }
}

void print_rows(const Summary& s, bool json) {
  const CompactRep& last = s.reps.back();
  std::uint64_t wrong = 0;
  for (const auto& r : s.reps) wrong += r.wrong_answers;
  for (const char* mode : {"single", "bulk"}) {
    const double mqps = s.med(std::string(mode) == "single" ? &CompactRep::single_mqps : &CompactRep::bulk_mqps);
    if (json) {
      JsonObject j;
      j.set("structure", s.structure)
          .set("keys", s.setup.keys)
          .set("value_bits", s.structure == "concury" ? 12u : s.setup.value_bits)
          .set("bits_per_key", last.bits_per_key)
          .set("formula_bits_per_key", last.formula_bits_per_key)
          .set("bytes", last.bytes)
          .set("lookup_mqps", mqps)
          .set("mode", mode)
          .set("update_mops", s.med(&CompactRep::update_mops))
          .set("build_seconds", s.med(&CompactRep::build_seconds))
          .set("reps", s.reps.size())
          .set("wrong_answers", wrong);
      if (s.structure == "ludo") j.set("seed_bits", s.setup.seed_bits);
      if (s.structure == "concury" || s.structure == "maglev-digest" || s.structure == "silkroad") {
        j.set("vips", s.setup.vips).set("dips_per_vip", s.setup.dips_per_vip);
      }
      j.merge(JsonObject::parse(last.extra.dump())).print_line();
    } else {
      const std::string name = s.structure == "ludo" ? fmt::format("ludo/{}b", s.setup.seed_bits) : s.structure;
      fmt::print("{:<14} {:>9} {:>6} {:>8.2f} {:>8.2f} {:>9.1f} {:>8.2f} {:>8.3f} {:>6}\n", name, s.setup.keys, mode,
                 last.bits_per_key, last.formula_bits_per_key, mqps, s.med(&CompactRep::update_mops),
                 s.med(&CompactRep::build_seconds), wrong);
    }
  }
  print_dynamic(s, json);
  std::fflush(stdout);
}

void print_ratios(const std::vector<Summary>& all) {
  auto find = [&](const std::string& structure, std::size_t keys) -> const Summary* {
    for (const auto& s : all) {
      if (s.structure == structure && s.setup.keys == keys) return &s;
    }
    return nullptr;
  };
  fmt::print("\nratios (this run, medians):\n");
  for (const auto& s : all) {
    if (s.structure != "concury") continue;
    const Summary* maglev = find("maglev-digest", s.setup.keys);
    const Summary* silkroad = find("silkroad", s.setup.keys);
    if (maglev) {
      fmt::print("  {:>9} connections: concury / maglev-digest bytes {:.2f}, bulk Mqps {:.2f}x, single {:.2f}x\n",
                 s.setup.keys, static_cast<double>(s.reps.back().bytes) / static_cast<double>(maglev->reps.back().bytes),
                 s.med(&CompactRep::bulk_mqps) / maglev->med(&CompactRep::bulk_mqps),
                 s.med(&CompactRep::single_mqps) / maglev->med(&CompactRep::single_mqps));
    }
    if (silkroad) {
      fmt::print("  {:>9} connections: concury / silkroad bytes {:.2f}, bulk Mqps {:.2f}x\n", s.setup.keys,
                 static_cast<double>(s.reps.back().bytes) / static_cast<double>(silkroad->reps.back().bytes),
                 s.med(&CompactRep::bulk_mqps) / silkroad->med(&CompactRep::bulk_mqps));
    }
  }
}

// Concury against the Maglev-style table, both built anew in each repetition and their bulk lookups
// timed in alternating passes over the same queries: the median of the rounds' ratios.
void print_paired(const CompactBenchSetup& setup, unsigned reps, bool json) {
  std::vector<double> concury, maglev, ratio;
  CompactBenchSetup s = setup;
  compact::ConcuryLayout layout{};
  for (unsigned rep = 0; rep < reps; ++rep) {
    s.seed = rep + 1;
    const PairedLookups p = run_concury_against_maglev(s);
    layout = p.layout;
    for (std::size_t round = 0; round < p.concury_mqps.size(); ++round) {
      concury.push_back(p.concury_mqps[round]);
      maglev.push_back(p.maglev_mqps[round]);
      ratio.push_back(p.concury_mqps[round] / p.maglev_mqps[round]);
    }
  }
  const auto [lowest, highest] = std::minmax_element(ratio.begin(), ratio.end());
  if (json) {
    JsonObject j;
    j.set("structure", "concury/maglev-digest")
        .set("keys", s.keys)
        .set("mode", "bulk-paired")
        .set("layout", std::string(compact::layout_name(layout)))
        .set("ratio", median(ratio))
        .set("ratio_min", *lowest)
        .set("ratio_max", *highest)
        .set("concury_mqps", median(concury))
        .set("maglev_mqps", median(maglev))
        .set("vips", s.vips)
        .set("dips_per_vip", s.dips_per_vip)
        .set("reps", reps)
        .set("rounds", ratio.size())
        .print_line();
  } else {
    fmt::print("  {:>9} connections: concury ({}) / maglev-digest bulk, timed in alternation: {:.2f}x "
               "(rounds {:.2f}-{:.2f}x; {:.1f} against {:.1f} Mqps)\n",
               s.keys, compact::layout_name(layout), median(ratio), *lowest, *highest, median(concury), median(maglev));
  }
}

// One repetition's setup for `keys` keys, as the options give it (Ludo's first seed width).
CompactBenchSetup setup_of(const CompactBenchOptions& o, std::size_t keys) {
  return {.keys = keys,
          .queries = o.queries,
          .value_bits = o.value_bits,
          .seed_bits = o.seed_bits.front(),
          .fingerprint_bits = o.fingerprint_bits,
          .vips = o.vips,
          .dips_per_vip = o.dips,
          .dynamic_seconds = o.dynamic_seconds,
          .dip_change_every = o.dip_change_every,
          .control_thread = o.control_thread,
          .departures = o.departures,
          .concury_scalar = o.concury_scalar,
          .concury_layout = o.concury_layout};
}

bool has(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

void run_compact_bench(CompactBenchOptions o) {
  if (o.quick) {
    o.sizes = {1 << 10, 1 << 16, 1 << 20};
    o.reps = std::min(o.reps, 2u);
  }
  if (o.structures.empty()) o.structures = compact_structures();
  if (o.reps == 0) throw UserError("bench compact: --reps must be at least 1");
  if (o.value_bits < 1 || o.value_bits > 32) throw UserError("bench compact: --value-bits is 1..32");
  if (o.queries % kCompactQuerySegment != 0) {
    throw UserError(fmt::format("bench compact: --queries must be a multiple of {}", kCompactQuerySegment));
  }
  if (o.json) {
    print_run_context(false);
  } else {
    fmt::print("flowtrack bench compact: TSC at {:.2f} GHz, median of {} reps, 64-bit keys, {}-bit values\n\n",
               tsc_hz() / 1e9, o.reps, o.value_bits);
    fmt::print("{:<14} {:>9} {:>6} {:>8} {:>8} {:>9} {:>8} {:>8} {:>6}\n", "structure", "keys", "mode", "bits/key",
               "formula", "Mqps", "upd Mops", "build s", "wrong");
  }
  std::vector<Summary> all;
  for (const std::size_t keys : o.sizes) {
    for (const auto& structure : o.structures) {
      const std::vector<unsigned> seed_bits = structure == "ludo" ? o.seed_bits : std::vector<unsigned>{o.seed_bits.front()};
      for (const unsigned bits : seed_bits) {
        Summary s{structure, setup_of(o, keys), {}};
        s.setup.seed_bits = bits;
        if (structure == "concury") s.setup.arrivals = o.arrivals;
        for (unsigned rep = 0; rep < o.reps; ++rep) {
          s.setup.seed = rep + 1;
          s.reps.push_back(run_compact_once(structure, s.setup));
        }
        print_rows(s, o.json);
        all.push_back(std::move(s));
      }
    }
  }
  if (!o.json) print_ratios(all);
  if (has(o.structures, "concury") && has(o.structures, "maglev-digest")) {
    for (const std::size_t keys : o.sizes) print_paired(setup_of(o, keys), o.reps, o.json);
  }
}

}  // namespace flowtrack::cli
