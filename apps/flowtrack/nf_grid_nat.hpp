// run_nat's definition, for its explicit instantiations (nf_grid_nat_<aging>.cpp).
#pragma once

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/runtime/nat_answers.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"

namespace flowtrack::cli {

template <class Aging>
NfRun run_nat(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
              const PacketPartition& partition, const ReplayOptions& options) {
  NfRun run;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Nat = Nat44<Table, Aging>;
    const RehearsedReplay r = rehearse_and_replay(
        trace, partition, shared, options,
        [&](unsigned instance, unsigned instances, Nanos start) { return std::make_unique<Nat>(configs.nat, instance, instances, start); },
        NatAnswers(trace.link_type()), [](const Nat& nf, WorkerReport& report) {
          report.live_connections = nf.sessions().size();
          report.peak_connections = nf.sessions().peak_size();
          // A replay has no ports: what touches neither side passes by the address rule (nat44.hpp).
          report.function_counts["neither_inside_nor_pool"] = nf.counters().passed;
        });
    run = {r.workers, r.unpresentable};
  });
  return run;
}

}  // namespace flowtrack::cli
