// run_stateful_lb's definition, for its explicit instantiations (nf_grid_lb_<aging>.cpp).
#pragma once

#include "flowtrack/nf/stateful_lb.hpp"
#include "lb_replay.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"

namespace flowtrack::cli {

template <class Aging>
std::vector<WorkerResult> run_stateful_lb(const NfChoice& choice, NfScaling scaling, const NfConfigs& configs,
                                          const PacketStore& trace, const PacketPartition& partition) {
  std::vector<WorkerResult> results;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Lb = LbClientSideReplay<Table, Aging>;
    results = run_workers(
        trace, partition, choice.workers, scaling,
        [&](unsigned, unsigned, Nanos start) {
          auto nf = std::make_unique<Lb>(configs.lb, start);
          nf->set_link(trace.link_type());
          return nf;
        },
        [](Lb& nf, WorkerResult& r) {
          r.live_connections = nf.lb().tracker().size();
          for (const Service& s : nf.lb().services()) {
            for (const Backend& b : s.backends()) r.backends[b.config.name] += b.total_connections;
          }
        });
  });
  return results;
}

}  // namespace flowtrack::cli
