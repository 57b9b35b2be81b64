// `flowtrack bench compact`: the compact structures (Othello, Ludo, Cuckoo Filtable) and the three
// load-balancer lookup structures (Concury, a Maglev-style digest table, a SilkRoad-style multi-level
// digest table) at sizes from 1K to 16M keys: bits per key against the thesis's formulas, lookup Mqps
// single and bulk (one thread), update Mops, construction time. Each figure is the median over --reps
// repetitions; the ratios printed at the end come from this run only. See compact_bench_runs.cpp for
// what each repetition does.
#include <fmt/core.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "compact_bench_runs.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack::cli {
namespace {

struct CompactBenchOptions {
  std::vector<std::string> structures;
  std::vector<std::size_t> sizes{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24};
  std::vector<unsigned> seed_bits{5, 6};
  unsigned value_bits = 20;
  unsigned fingerprint_bits = 12;
  unsigned vips = 128, dips = 32;
  unsigned reps = 3;
  bool quick = false;
  bool json = false;
};

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

void print_rows(const Summary& s, bool json) {
  const CompactRep& last = s.reps.back();
  std::uint64_t wrong = 0;
  for (const auto& r : s.reps) wrong += r.wrong_answers;
  for (const char* mode : {"single", "bulk"}) {
    const double mqps = s.med(std::string(mode) == "single" ? &CompactRep::single_mqps : &CompactRep::bulk_mqps);
    if (json) {
      nlohmann::json j = {{"structure", s.structure},
                          {"keys", s.setup.keys},
                          {"value_bits", s.structure == "concury" ? 12u : s.setup.value_bits},
                          {"bits_per_key", last.bits_per_key},
                          {"formula_bits_per_key", last.formula_bits_per_key},
                          {"bytes", last.bytes},
                          {"lookup_mqps", mqps},
                          {"mode", mode},
                          {"update_mops", s.med(&CompactRep::update_mops)},
                          {"build_seconds", s.med(&CompactRep::build_seconds)},
                          {"reps", s.reps.size()},
                          {"wrong_answers", wrong}};
      if (s.structure == "ludo") j["seed_bits"] = s.setup.seed_bits;
      if (s.structure == "concury" || s.structure == "maglev-digest" || s.structure == "silkroad") {
        j["vips"] = s.setup.vips;
        j["dips_per_vip"] = s.setup.dips_per_vip;
      }
      j.update(last.extra);
      fmt::print("{}\n", j.dump());
    } else {
      const std::string name = s.structure == "ludo" ? fmt::format("ludo/{}b", s.setup.seed_bits) : s.structure;
      fmt::print("{:<14} {:>9} {:>6} {:>8.2f} {:>8.2f} {:>9.1f} {:>8.2f} {:>8.3f} {:>6}\n", name, s.setup.keys, mode,
                 last.bits_per_key, last.formula_bits_per_key, mqps, s.med(&CompactRep::update_mops),
                 s.med(&CompactRep::build_seconds), wrong);
    }
  }
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

void run_compact_bench(CompactBenchOptions o) {
  if (o.quick) {
    o.sizes = {1 << 10, 1 << 16, 1 << 20};
    o.reps = std::min(o.reps, 2u);
  }
  if (o.structures.empty()) o.structures = compact_structures();
  if (o.reps == 0) throw UserError("bench compact: --reps must be at least 1");
  if (o.value_bits < 1 || o.value_bits > 32) throw UserError("bench compact: --value-bits is 1..32");
  if (!o.json) {
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
        Summary s{structure, {keys, o.value_bits, bits, o.fingerprint_bits, o.vips, o.dips, 1}, {}};
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
}

}  // namespace

void add_compact_bench(CLI::App& bench) {
  auto o = std::make_shared<CompactBenchOptions>();
  auto* cmd = bench.add_subcommand("compact", "compact structures (Othello, Ludo, Cuckoo Filtable) and LB lookup structures");
  cmd->add_option("--structures", o->structures, "othello, ludo, filtable, concury, maglev-digest, silkroad (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(compact_structures()));
  cmd->add_option("--sizes", o->sizes, "keys (connections for the LB structures)")->delimiter(',')
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 27));
  cmd->add_option("--seed-bits", o->seed_bits, "Ludo's per-bucket seed widths")->delimiter(',')->check(CLI::Range(2u, 8u));
  cmd->add_option("--value-bits", o->value_bits, "value width of othello, ludo, filtable (concury: 12-bit Dcodes)");
  cmd->add_option("--fingerprint-bits", o->fingerprint_bits, "Cuckoo Filtable's fingerprint width")->check(CLI::Range(2u, 16u));
  cmd->add_option("--vips", o->vips, "VIPs of the LB structures")->check(CLI::Range(1u, 4096u));
  cmd->add_option("--dips", o->dips, "DIPs per VIP")->check(CLI::Range(1u, 256u));
  cmd->add_option("--reps", o->reps, "repetitions (median reported)");
  cmd->add_flag("--quick", o->quick, "sizes 1K, 64K, 1M; 2 reps");
  cmd->add_flag("--json", o->json, "one JSON object per line");
  cmd->callback([o] { run_compact_bench(*o); });
}

}  // namespace flowtrack::cli
