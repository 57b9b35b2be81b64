// run_nf: names to types. The stateless functions are built here; the stateful ones, whose instances
// span the table grid, come from nf_grid_*.cpp.
#include "nf_launch.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "flowtrack/aging/heap_aging.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "direct_returns.hpp"
#include "nf_grid.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

NfScaling scaling_of(const NfChoice& c) {
  if (c.scaling == "sharded") return NfScaling::sharded;
  if (c.scaling == "spinlock") {
    if (c.nf != "lb" && c.nf != "nat") {
      throw UserError(fmt::format("--scaling spinlock: {} {}; it runs sharded", c.nf,
                                  c.nf == "concury" ? "has no connection table to share" : "keeps no state to share"));
    }
    return NfScaling::spinlock;
  }
  throw UserError(fmt::format("unknown scaling '{}' (sharded, spinlock)", c.scaling));
}

void collect_stateless(StatelessLb& nf, WorkerResult& r) {
  r.lb_stats += lb_stats(nf.services());
  for (const auto& [name, traffic] : r.lb_stats.backends) r.backends[name] = traffic.packets;
}

NfRun run_function(const NfChoice& c, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
                   const NfRunOptions& options) {
  const NfScaling scaling = scaling_of(c);
  if (c.nf == "fwd") {
    return {run_workers(trace, partition, c.workers, scaling, options,
                        [](unsigned, unsigned, Nanos) { return std::make_unique<Forwarder>(); }, [](Forwarder&, WorkerResult&) {})};
  }
  if (c.nf == "slb") {
    return {run_workers(trace, partition, c.workers, scaling, options,
                        [&](unsigned, unsigned, Nanos) { return std::make_unique<StatelessLb>(configs.slb); }, collect_stateless)};
  }
  if (c.nf == "concury") return run_concury(c, configs, trace, partition, options);
  if (c.nf != "lb" && c.nf != "nat") throw UserError(fmt::format("unknown function '{}' (fwd, slb, lb, nat, concury)", c.nf));
  const bool lb = c.nf == "lb";
  if (c.aging == TimerWheel::kName) {
    return lb ? run_stateful_lb<TimerWheel>(c, scaling, configs, trace, partition, options)
              : run_nat<TimerWheel>(c, scaling, configs, trace, partition, options);
  }
  if (c.aging == HeapAging::kName) {
    return lb ? run_stateful_lb<HeapAging>(c, scaling, configs, trace, partition, options)
              : run_nat<HeapAging>(c, scaling, configs, trace, partition, options);
  }
  throw UserError(fmt::format("unknown aging '{}' (wheel, heap)", c.aging));
}

}  // namespace

NfRun run_nf(const NfChoice& c, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
             const NfRunOptions& options) {
  const std::span<const ServiceConfig> services = c.nf == "slb" ? std::span<const ServiceConfig>(configs.slb.services)
                                                  : c.nf == "lb" || c.nf == "concury" ? std::span<const ServiceConfig>(configs.lb.services)
                                                                                       : std::span<const ServiceConfig>();
  if (std::ranges::none_of(services, [](const ServiceConfig& s) { return s.tunnel.tunnels(); })) {
    return run_function(c, configs, trace, partition, options);
  }
  PacketPartition replayed = partition;
  const std::uint64_t direct_return = leave_out_direct_returns(trace, services, replayed);
  NfRun run = run_function(c, configs, trace, replayed, options);
  run.direct_return = direct_return;
  return run;
}

}  // namespace flowtrack::cli
