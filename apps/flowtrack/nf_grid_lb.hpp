// run_stateful_lb's definition, for its explicit instantiations (nf_grid_lb_<aging>.cpp).
#pragma once

#include "flowtrack/nf/stateful_lb.hpp"
#include "lb_answers.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"
#include "replay_rehearsal.hpp"

namespace flowtrack::cli {

template <class Aging>
NfRun run_stateful_lb(const NfChoice& choice, NfScaling scaling, const NfConfigs& configs, const PacketStore& trace,
                      const PacketPartition& partition, const NfRunOptions& options) {
  NfRun run;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Lb = StatefulLb<Table, Aging>;
    std::tie(run.workers, run.unpresentable) = run_rehearsed(
        trace, partition, choice.workers, scaling, options,
        [&](unsigned, unsigned, Nanos start) { return std::make_unique<Lb>(configs.lb, start); },
        LbAnswers(configs.lb, trace.link_type()),
        [](const Lb& nf, WorkerResult& r) {
          r.live_connections = nf.tracker().size();
          r.peak_connections = nf.tracker().peak_size();
          for (const Service& s : nf.services()) {
            for (const Backend& b : s.backends()) r.backends[b.config.name] += b.total_connections;
          }
          r.lb_stats += lb_stats(nf.services());
          r.function_counts["over_rate"] += nf.stats().over_rate;
        });
  });
  return run;
}

}  // namespace flowtrack::cli
