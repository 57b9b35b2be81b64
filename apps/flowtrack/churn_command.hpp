// `flowtrack churn`: the connections each design breaks while LB instances behind ECMP and their
// backends come and go, for each number of instances asked, beside the published figures of Cheetah's
// churn experiment (the model: flowtrack/lab/churn_model.hpp).
#pragma once

#include <vector>

#include "flowtrack/lab/churn_model.hpp"

namespace flowtrack::cli {

struct ChurnOptions {
  std::vector<unsigned> instances = {2, 4, 8, 16, 32, 64};
  lab::ChurnWorkload workload;
  double sync_delay = 0.1;
  bool resilient = false;
};

void churn_command(const ChurnOptions& options);

}  // namespace flowtrack::cli
