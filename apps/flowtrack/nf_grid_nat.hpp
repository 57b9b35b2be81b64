// run_nat's definition, for its explicit instantiations (nf_grid_nat_<aging>.cpp).
#pragma once

#include "flowtrack/nf/nat44.hpp"
#include "nat_answers.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"
#include "replay_rehearsal.hpp"

namespace flowtrack::cli {

template <class Aging>
NfRun run_nat(const NfChoice& choice, NfScaling scaling, const NfConfigs& configs, const PacketStore& trace,
              const PacketPartition& partition, const NfRunOptions& options) {
  NfRun run;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Nat = Nat44<Table, Aging>;
    std::tie(run.workers, run.unpresentable) = run_rehearsed(
        trace, partition, choice.workers, scaling, options,
        [&](unsigned instance, unsigned instances, Nanos start) { return std::make_unique<Nat>(configs.nat, instance, instances, start); },
        NatAnswers(trace.link_type()),
        [](const Nat& nf, WorkerResult& r) {
          r.live_connections = nf.sessions().size();
          r.peak_connections = nf.sessions().peak_size();
          // A replay has no ports: what touches neither side passes by the address rule (nat44.hpp).
          r.function_counts["neither_inside_nor_pool"] = nf.counters().passed;
        });
  });
  return run;
}

}  // namespace flowtrack::cli
