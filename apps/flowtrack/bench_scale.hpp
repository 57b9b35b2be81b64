// `flowtrack bench scale`: its options and entry point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowtrack::cli {

struct ScaleBenchOptions {
  std::vector<std::string> strategies;
  std::vector<std::string> tables;  // empty: each strategy's default tables
  std::vector<unsigned> workers;    // empty: 1 .. usable cores
  std::string pcap;
  std::uint32_t flows = 20'000;
  unsigned windows = 8;
  unsigned passes = 4;
  unsigned reps = 3;
  double load = 0.75;
  double timeout_ms = 0;
  bool software = true;  // also run sharded with software steering
  bool quick = false;
  bool json = false;
};

void run_scale_bench(ScaleBenchOptions o);

}  // namespace flowtrack::cli
