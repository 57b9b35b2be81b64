// run_nat's definition, for its explicit instantiations (nf_grid_nat_<aging>.cpp), and the NAT with its
// pair's sync events made (nf_grid_nat_sync_wheel.cpp).
#pragma once

#include <type_traits>

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/runtime/nat_answers.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"
#include "nf_grid.hpp"
#include "nf_grid_tables.hpp"

namespace flowtrack::cli {

// The NAT on the chosen table, its sync events (nf/nat_events.hpp) going to `Events`; with a sink that
// counts them (emitted()), the report's function_counts["sync_events"] holds the count.
template <class Aging, class Events>
NfRun replay_nat(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
                 const PacketPartition& partition, const ReplayOptions& options) {
  NfRun run;
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Nat = Nat44<Table, Aging, Events>;
    const RehearsedReplay r = rehearse_and_replay(
        trace, partition, shared, options,
        [&](unsigned instance, unsigned instances, Nanos start) { return std::make_unique<Nat>(configs.nat, instance, instances, start); },
        NatAnswers(trace.link_type()), [](const Nat& nf, WorkerReport& report) {
          report.live_connections = nf.sessions().size();
          report.peak_connections = nf.sessions().peak_size();
          report.state_bytes = nf.state_bytes();
          // A replay has no ports: what touches neither side passes by the address rule (nat44.hpp).
          report.function_counts["neither_inside_nor_pool"] = nf.counters().passed;
          if constexpr (Events::kEnabled) report.function_counts["sync_events"] = nf.events().emitted();
        });
    run = {r.workers, r.unpresentable};
  });
  return run;
}

template <class Aging>
NfRun run_nat(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
              const PacketPartition& partition, const ReplayOptions& options) {
  return replay_nat<Aging, NoNatEvents>(choice, shared, configs, trace, partition, options);
}

}  // namespace flowtrack::cli
