// run_stateful_lb's definition, for its explicit instantiations (nf_grid_lb_<aging>.cpp).
#pragma once

#include <deque>
#include <mutex>

#include "discarding_lb_exceptions.hpp"
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
  // With the exceptions shared: a sink for each instance (the replay builds one per worker on the
  // worker's thread, or one shared, and its rehearsal its own), and an empty table of peers'
  // exceptions, which first packets consult.
  std::deque<DiscardingLbExceptions> sinks;  // a deque: an instance's sink stays where it is as others come
  std::mutex sinks_mutex;
  LbPeerExceptions no_peers(0);
  with_function_table(choice.table, [&]<class Table>(std::type_identity<Table>) {
    using Lb = StatefulLb<Table, Aging>;
    const auto make = [&](unsigned, unsigned, Nanos start) {
      auto lb = std::make_unique<Lb>(configs.lb, start);
      if (choice.lb_sync_events) {
        const std::lock_guard lock(sinks_mutex);
        lb->share_exceptions(&sinks.emplace_back(), &no_peers);
      }
      return lb;
    };
    const RehearsedReplay r = rehearse_and_replay(
        trace, partition, shared, options, make,
        LbAnswers(configs.lb, trace.link_type()), [&](const Lb& nf, WorkerReport& report) {
          report.live_connections = nf.tracker().size();
          report.peak_connections = nf.tracker().peak_size();
          report.state_bytes = nf.state_bytes();
          for (const Service& s : nf.services()) {
            for (const Backend& b : s.backends()) report.backends[b.config.name] += b.total_connections;
          }
          report.lb_stats += lb_stats(nf.services());
          report.function_counts["over_rate"] += nf.stats().over_rate;
          if (choice.lb_sync_events) report.function_counts["sync_events"] += nf.stats().exception_events;
        });
    run = {r.workers, r.unpresentable};
  });
  return run;
}

}  // namespace flowtrack::cli
