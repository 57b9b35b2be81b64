// run_nat's definition, for its explicit instantiations (nf_grid_nat_<aging>.cpp).
#pragma once

#include "flowtrack/nf/nat44.hpp"
#include "nat_replay.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"

namespace flowtrack::cli {

template <class Aging>
std::vector<WorkerResult> run_nat(const NfChoice& choice, NfScaling scaling, const NfConfigs& configs,
                                  const PacketStore& trace, const PacketPartition& partition) {
  std::vector<WorkerResult> results;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Nat = NatInsideReplay<Table, Aging>;
    results = run_workers(
        trace, partition, choice.workers, scaling,
        [&](unsigned instance, unsigned instances, Nanos start) {
          auto nf = std::make_unique<Nat>(configs.nat, instance, instances, start);
          nf->set_link(trace.link_type());
          return nf;
        },
        [](Nat& nf, WorkerResult& r) { r.live_connections = nf.nat().sessions().size(); });
  });
  return results;
}

}  // namespace flowtrack::cli
