// `flowtrack bench compact`: its options and entry point.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/compact/concury_layout.hpp"

namespace flowtrack::cli {

struct CompactBenchOptions {
  std::vector<std::string> structures;
  std::vector<std::size_t> sizes{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24};
  std::vector<unsigned> seed_bits{5, 6};
  unsigned value_bits = 20;
  unsigned fingerprint_bits = 12;
  unsigned vips = 128, dips = 32;
  unsigned reps = 3;
  std::size_t queries = std::size_t{1} << 21;  // lookups a timing
  std::vector<double> arrivals;  // concury under load: new connections per second (none: not measured)
  double dynamic_seconds = 10, dip_change_every = 10;
  bool control_thread = true;  // concury under load: its control plane on a thread of its own
  bool departures = true;      // concury under load: each arrival matched by a departure (steady population)
  bool concury_scalar = false;  // concury's bulk lookups on the scalar path, not AVX2
  std::optional<compact::ConcuryLayout> concury_layout;  // concury's arrays; none: by size (layout_for)
  bool quick = false;
  bool json = false;
};

void run_compact_bench(CompactBenchOptions o);

}  // namespace flowtrack::cli
