// `flowtrack bench aging`: its options and entry point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowtrack::cli {

struct AgingBenchOptions {
  std::vector<std::string> methods{"wheel", "lazy", "scan", "heap"};
  std::vector<double> frequencies{10, 100, 1000, 10000};
  std::size_t capacity = 1 << 20;
  double live_share = 0.5;    // live flows = capacity * live_share
  double new_share = 0.02;    // share of packets that start a new flow
  double rate_mpps = 10;      // virtual packet rate
  double timeout_ms = 100;
  std::uint64_t packets = 8'000'000;
  unsigned reps = 3;
  bool quick = false;
  bool json = false;
};

void run_aging_bench(AgingBenchOptions o);

}  // namespace flowtrack::cli
