// run_stateful_lb's definition, for its explicit instantiations (nf_grid_lb_<aging>.cpp).
#pragma once

#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/runtime/lb_answers.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"

namespace flowtrack::cli {

template <class Aging>
NfRun run_stateful_lb(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
                      const PacketPartition& partition, const ReplayOptions& options) {
  NfRun run;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Lb = StatefulLb<Table, Aging>;
    const RehearsedReplay r = rehearse_and_replay(
        trace, partition, shared, options, [&](unsigned, unsigned, Nanos start) { return std::make_unique<Lb>(configs.lb, start); },
        LbAnswers(configs.lb, trace.link_type()), [](const Lb& nf, WorkerReport& report) {
          report.live_connections = nf.tracker().size();
          report.peak_connections = nf.tracker().peak_size();
          for (const Service& s : nf.services()) {
            for (const Backend& b : s.backends()) report.backends[b.config.name] += b.total_connections;
          }
          report.lb_stats += lb_stats(nf.services());
          report.function_counts["over_rate"] += nf.stats().over_rate;
        });
    run = {r.workers, r.unpresentable};
  });
  return run;
}

}  // namespace flowtrack::cli
