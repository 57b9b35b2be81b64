// One repetition of `flowtrack bench compact` for one structure and size: build it, measure its memory,
// its lookups (single and bulk) and its updates. Every key is a 64-bit integer (Concury's 4-tuple form).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flowtrack/compact/concury_layout.hpp"

namespace flowtrack {

// Lookups are timed a segment of this many queries at a time (labkit/src/compact_bench_runs.cpp, time_lookups).
inline constexpr std::size_t kCompactQuerySegment = std::size_t{1} << 14;

struct CompactBenchSetup {
  std::size_t keys = 0;
  std::size_t queries = std::size_t{1} << 21;  // lookups a timing, a multiple of kCompactQuerySegment
  unsigned value_bits = 20;
  unsigned seed_bits = 5;         // Ludo
  unsigned fingerprint_bits = 12; // Cuckoo Filtable
  unsigned vips = 128, dips_per_vip = 32;  // the LB structures
  std::uint64_t seed = 1;
  // Concury under load: for each arrival rate (new connections per second), bulk lookups for
  // dynamic_seconds while connections arrive and one VIP's pool changes every dip_change_every seconds
  // (the control plane on a second thread, or with control_thread false on the lookups' core). With
  // departures, each connection learnt is matched by the departure of its VIP's oldest one (the control
  // plane forgets it): the population stays at `keys`; without, it grows by every arrival.
  std::vector<double> arrivals;
  double dynamic_seconds = 10, dip_change_every = 10;
  bool control_thread = true;
  bool departures = true;
  bool concury_scalar = false;  // Concury's bulk lookups on the scalar path even where the CPU has AVX2
  std::optional<compact::ConcuryLayout> concury_layout;  // none: by size (compact::layout_for)
};

// Concury's lookups at one arrival rate, against its lookups with nothing arriving (same run).
struct DynamicPoint {
  double arrivals_per_second = 0;
  double mqps = 0, static_mqps = 0;
  std::uint64_t learnt = 0, departed = 0, dip_changes = 0;
  std::uint64_t reports_behind = 0;  // reports the control plane had not learnt when the time was up
  // Reports learnt after their VIP's arrays were handed over again since their answer: the new arrays did
  // not know them (on the same core, none: every report is learnt before a change). Repaired: of those,
  // the ones the newer arrays or row would have sent elsewhere, kept on the DIP they were given.
  std::uint64_t late_reports = 0, repaired_reports = 0;
  double elapsed_seconds = 0;        // the data plane's time (past dynamic_seconds when a last check ran long)
  double control_busy_seconds = 0;   // the control plane's time learning and changing pools
};

// What one repetition measured; medians over repetitions are taken by the caller.
struct CompactRep {
  double build_seconds = 0;
  double single_mqps = 0, bulk_mqps = 0;
  double update_mops = 0;
  double bits_per_key = 0, formula_bits_per_key = 0;
  std::size_t bytes = 0;
  std::uint64_t wrong_answers = 0;  // lookups of stored keys that did not return the stored value / DIP
  nlohmann::json extra = nlohmann::json::object();  // structure-specific figures (overflow rate, ...)
  std::vector<DynamicPoint> dynamic;  // concury, when setup.arrivals is set
};

// Concury's and the Maglev-style table's bulk lookups of the same queries, both structures built once,
// their passes over the queries alternating (the headline ratio of [concury-thesis]'s Table 5.1, steadier on a
// shared machine than two separate runs): each round's Mqps, in order.
struct PairedLookups {
  std::vector<double> concury_mqps, maglev_mqps;
  compact::ConcuryLayout layout;  // Concury's
};
PairedLookups run_concury_against_maglev(const CompactBenchSetup& setup);

// Structures: othello, ludo, filtable, concury, maglev-digest, silkroad.
const std::vector<std::string>& compact_structures();
CompactRep run_compact_once(const std::string& structure, const CompactBenchSetup& setup);

}  // namespace flowtrack
