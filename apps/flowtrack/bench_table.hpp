// `flowtrack bench table`: its options and entry point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowtrack::cli {

struct TableBenchOptions {
  std::vector<std::string> tables;
  std::vector<std::size_t> sizes{1 << 16, 1 << 20, 1 << 24};
  std::vector<double> loads{0.1, 0.25, 0.5, 0.75, 0.9, 0.95};
  std::vector<std::string> ops{"insert", "hit", "miss", "erase", "churn"};
  std::vector<std::string> modes{"single", "bulk"};
  std::string dist = "uniform";
  unsigned reps = 5;
  bool quick = false;
  bool json = false;
};

void run_table_bench(TableBenchOptions o);

}  // namespace flowtrack::cli
