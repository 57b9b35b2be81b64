// run_nf: names to types. The stateless functions are built here; the stateful ones, whose instances
// span the table grid, come from nf_grid_*.cpp.
#include "nf_launch.hpp"

#include <fmt/core.h>

#include "flowtrack/aging/heap_aging.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "nf_grid.hpp"
#include "flowtrack/util/available_memory.hpp"
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
  for (std::size_t s = 0; s < nf.services().size(); ++s) {
    const auto& backends = nf.services()[s].backends();
    for (std::size_t b = 0; b < backends.size() && b < nf.sent()[s].size(); ++b) {
      r.backends[backends[b].config.name] += nf.sent()[s][b];
    }
  }
}

}  // namespace

NfConfigs load_nf_configs(const std::string& nf, const ConfigText& text) {
  NfConfigs configs;
  if (nf == "fwd") check_forwarder_config(text);
  if (nf == "slb") configs.slb = load_stateless_lb_config(text);
  if (nf == "lb" || nf == "concury") configs.lb = load_stateful_lb_config(text);
  if (nf == "nat") configs.nat = load_nat_config(text);
  return configs;
}

Footprint nf_footprint(const std::string& nf, const NfConfigs& configs, unsigned instances) {
  if (nf == "slb") return stateless_lb_footprint(configs.slb, instances);
  if (nf == "lb") return stateful_lb_footprint(configs.lb, instances);
  if (nf == "concury") return concury_footprint(configs.lb, instances);
  if (nf == "nat") return nat_footprint(configs.nat, instances);
  return {};
}

void announce_slow_build(const std::string& nf, const Footprint& footprint) {
  if (!builds_slowly(footprint)) return;
  fmt::print(stderr, "flowtrack: building {}: {}, about {}; this takes a few seconds\n", nf, footprint.what,
             memory_size_text(footprint.bytes));
}

NfRun run_nf(const NfChoice& c, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
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

}  // namespace flowtrack::cli
