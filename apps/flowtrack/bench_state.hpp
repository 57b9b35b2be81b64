// `flowtrack bench state`: how long a NAT's and a stateful LB's state takes to save to a state file and
// to restore from it, at a given number of connections (nf/state_file.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace flowtrack::cli {

struct StateBenchOptions {
  std::vector<std::string> nfs{"nat", "lb"};
  std::size_t connections = 1'000'000;
  std::string path;  // the state file; default: a file in the system's temporary directory
  unsigned reps = 3;
  bool json = false;
};

void run_state_bench(const StateBenchOptions& o);

}  // namespace flowtrack::cli
