#include "nf_launch.hpp"

#include <fmt/core.h>

#include "commands.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/table/registry.hpp"
#include "lb_replay.hpp"
#include "nat_replay.hpp"

namespace flowtrack::cli {
namespace {

// Calls fn(std::type_identity<Policy>{}) for the tracker aging policy named `name`; false if none.
template <class Fn>
bool with_tracker_aging(std::string_view name, Fn&& fn) {
  if (name == TimerWheel::kName) {
    fn(std::type_identity<TimerWheel>{});
    return true;
  }
  if (name == HeapAging::kName) {
    fn(std::type_identity<HeapAging>{});
    return true;
  }
  return false;
}

NfScaling scaling_of(const NfChoice& c) {
  if (c.scaling == "sharded") return NfScaling::sharded;
  if (c.scaling == "spinlock") {
    if (c.nf != "lb" && c.nf != "nat") {
      throw UserError(fmt::format("--scaling spinlock: {} keeps no state to share; it runs sharded", c.nf));
    }
    return NfScaling::spinlock;
  }
  throw UserError(fmt::format("unknown scaling '{}' (sharded, spinlock)", c.scaling));
}

void collect_stateless(StatelessLb& nf, WorkerResult& r) {
  for (std::size_t s = 0; s < nf.services().size(); ++s) {
    const auto& backends = nf.services()[s].backends();
    for (std::size_t b = 0; b < backends.size() && b < nf.sent()[s].size(); ++b) {
      r.backends[backends[b].config.name] += nf.sent()[s][b];
    }
  }
}

// The stateful functions, for every usable (table, aging) pair.
template <class Run>
void with_stateful_types(const NfChoice& c, Run&& run) {
  bool aging_known = false;
  const bool table_known = with_table<FlowKeyV4>(c.table, [&]<class Table>(std::type_identity<Table>) {
    if constexpr (Table::kConcurrency == Concurrency::many_writers) {
      throw UserError(fmt::format("table {} is a shared, many-writer table; the functions give each worker its own "
                                  "table or lock the whole function (--scaling spinlock)", c.table));
    } else {
      aging_known = with_tracker_aging(c.aging, [&]<class Aging>(std::type_identity<Aging>) {
        run(std::type_identity<Table>{}, std::type_identity<Aging>{});
      });
    }
  });
  if (!table_known) throw UserError(fmt::format("unknown table '{}'", c.table));
  if (!aging_known) throw UserError(fmt::format("unknown aging '{}' (wheel, heap)", c.aging));
}

}  // namespace

std::vector<WorkerResult> run_nf(const NfChoice& c, const NfConfigs& configs, const PacketStore& trace,
                                 const PacketPartition& partition) {
  const NfScaling scaling = scaling_of(c);
  if (c.nf == "fwd") {
    return run_workers(trace, partition, c.workers, scaling, [](unsigned, unsigned, Nanos) { return std::make_unique<Forwarder>(); },
                       [](Forwarder&, WorkerResult&) {});
  }
  if (c.nf == "slb") {
    return run_workers(
        trace, partition, c.workers, scaling, [&](unsigned, unsigned, Nanos) { return std::make_unique<StatelessLb>(configs.slb); },
        collect_stateless);
  }
  std::vector<WorkerResult> results;
  if (c.nf == "lb") {
    with_stateful_types(c, [&]<class Table, class Aging>(std::type_identity<Table>, std::type_identity<Aging>) {
      using Lb = LbClientSideReplay<Table, Aging>;
      results = run_workers(
          trace, partition, c.workers, scaling,
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
  if (c.nf == "nat") {
    with_stateful_types(c, [&]<class Table, class Aging>(std::type_identity<Table>, std::type_identity<Aging>) {
      using Nat = NatInsideReplay<Table, Aging>;
      results = run_workers(
          trace, partition, c.workers, scaling,
          [&](unsigned instance, unsigned instances, Nanos start) {
            auto nf = std::make_unique<Nat>(configs.nat, instance, instances, start);
            nf->set_link(trace.link_type());
            return nf;
          },
          [](Nat& nf, WorkerResult& r) { r.live_connections = nf.nat().sessions().size(); });
    });
    return results;
  }
  throw UserError(fmt::format("unknown function '{}' (fwd, slb, lb, nat)", c.nf));
}

}  // namespace flowtrack::cli
