// run_nf: names to types. The stateless functions are built here; the stateful ones, whose instances
// span the table grid, come from nf_grid_*.cpp.
#include "nf_launch.hpp"

#include <stdexcept>
#include <fmt/core.h>

#include <algorithm>
#include <type_traits>

#include "flowtrack/aging/heap_aging.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/runtime/sharing.hpp"
#include "direct_returns.hpp"
#include "nf_grid.hpp"
#include "flowtrack/util/available_memory.hpp"

namespace flowtrack::cli {
namespace {

// Whether one instance is shared under a lock (spinlock) rather than one per worker (sharded).
bool one_instance(const NfChoice& c) {
  if (c.scaling == "sharded") return false;
  if (c.scaling != "spinlock") throw std::invalid_argument(fmt::format("unknown scaling '{}' (sharded, spinlock)", c.scaling));
  if (c.nf != NfKind::lb && c.nf != NfKind::nat) {
    throw std::invalid_argument(fmt::format("--scaling spinlock: {} {}; it runs sharded", nf_kind_name(c.nf),
                                c.nf == NfKind::concury ? "has no connection table to share" : "keeps no state to share"));
  }
  return true;
}

void collect_stateless(const StatelessLb& nf, WorkerReport& r) {
  r.lb_stats += lb_stats(nf.services());
  for (const auto& [name, traffic] : r.lb_stats.backends) r.backends[name] = traffic.packets;
}

// A stateless function over the trace as captured, one instance per worker.
template <class Make, class Collect>
NfRun replay_stateless(const PacketStore& trace, const PacketPartition& partition, const ReplayOptions& options, Make make,
                       Collect&& collect) {
  OnePerWorker functions(std::move(make), static_cast<unsigned>(partition.packets.size()));
  return {replay(trace, partition, functions, options, collect)};
}

template <class Aging>
NfRun run_stateful(const NfChoice& c, bool shared, const NfConfigs& configs, const PacketStore& trace,
                   const PacketPartition& partition, const ReplayOptions& options) {
  if (c.nat_sync_events) {
    if (!std::is_same_v<Aging, TimerWheel>) throw std::invalid_argument("the NAT's sync events are measured with the wheel aging");
    return run_nat_with_sync_events(c, shared, configs, trace, partition, options);
  }
  return c.nf == NfKind::lb ? run_stateful_lb<Aging>(c, shared, configs, trace, partition, options)
                            : run_nat<Aging>(c, shared, configs, trace, partition, options);
}

NfRun run_function(const NfChoice& c, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
                   const ReplayOptions& options) {
  const bool shared = one_instance(c);
  if (options.check && !keeps_connections_on_backends(c.nf)) {
    throw std::invalid_argument(fmt::format("--check checks a load balancer's backends: {} has none", nf_kind_name(c.nf)));
  }
  if (options.check && shared) throw std::invalid_argument("--check follows one instance per worker: use --scaling sharded");
  if (c.nat_sync_events && c.nf != NfKind::nat) {
    throw std::invalid_argument(fmt::format("sync events are the NAT's: {} makes none", nf_kind_name(c.nf)));
  }
  if (c.lb_sync_events && c.nf != NfKind::lb) {
    throw std::invalid_argument(fmt::format("exceptions are the stateful LB's: {} shares none", nf_kind_name(c.nf)));
  }
  switch (c.nf) {
    case NfKind::fwd:
      return replay_stateless(
          trace, partition, options, [](unsigned, unsigned, Nanos) { return std::make_unique<Forwarder>(); },
          [](const Forwarder&, WorkerReport&) {});
    case NfKind::slb:
      return replay_stateless(
          trace, partition, options, [&](unsigned, unsigned, Nanos) { return std::make_unique<StatelessLb>(configs.slb); },
          collect_stateless);
    case NfKind::concury: return run_concury(c, configs, trace, partition, options);
    case NfKind::lb:
    case NfKind::nat:
      if (c.aging == TimerWheel::kName) return run_stateful<TimerWheel>(c, shared, configs, trace, partition, options);
      if (c.aging == HeapAging::kName) return run_stateful<HeapAging>(c, shared, configs, trace, partition, options);
      throw std::invalid_argument(fmt::format("unknown aging '{}' (wheel, heap)", c.aging));
  }
  throw std::invalid_argument("unknown function");
}

}  // namespace

NfConfigs load_nf_configs(NfKind nf, const ConfigText& text) {
  NfConfigs configs;
  switch (nf) {
    case NfKind::fwd: check_forwarder_config(text); break;
    case NfKind::slb: configs.slb = load_stateless_lb_config(text); break;
    case NfKind::lb:
    case NfKind::concury: configs.lb = load_stateful_lb_config(text); break;
    case NfKind::nat: configs.nat = load_nat_config(text); break;
  }
  return configs;
}

Footprint nf_footprint(NfKind nf, const NfConfigs& configs, unsigned instances) {
  switch (nf) {
    case NfKind::fwd: return {};
    case NfKind::slb: return stateless_lb_footprint(configs.slb, instances);
    case NfKind::lb: return stateful_lb_footprint(configs.lb, instances);
    case NfKind::concury: return concury_footprint(configs.lb, instances);
    case NfKind::nat: return nat_footprint(configs.nat, instances);
  }
  return {};
}

void announce_slow_build(NfKind nf, const Footprint& footprint) {
  if (!builds_slowly(footprint)) return;
  fmt::print(stderr, "flowtrack: building {}: {}, about {}; this takes a few seconds\n", nf_kind_name(nf), footprint.what,
             memory_size_text(footprint.bytes));
}

NfRun run_nf(const NfChoice& c, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
             const ReplayOptions& options) {
  const std::span<const ServiceConfig> services = c.nf == NfKind::slb ? std::span<const ServiceConfig>(configs.slb.services)
                                                  : keeps_connections_on_backends(c.nf) ? std::span<const ServiceConfig>(configs.lb.services)
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

std::map<std::string, std::uint64_t> NfRun::drops_by_reason() const {
  std::map<std::string, std::uint64_t> drops;
  if (unpresentable != 0) drops["replay_unpresentable"] = unpresentable;
  for (const WorkerReport& r : workers) {
    for (std::size_t s = 0; s < kParseStatusCount; ++s) {
      if (r.counters.parse_drops[s] != 0) drops[std::string(parse_status_name(static_cast<ParseStatus>(s)))] += r.counters.parse_drops[s];
    }
    for (std::size_t d = 0; d < kNfDropCount; ++d) {
      if (r.counters.function.drops[d] != 0) drops[std::string(nf_drop_name(static_cast<NfDrop>(d)))] += r.counters.function.drops[d];
    }
    if (r.counters.ring_full != 0) drops["ring_full"] += r.counters.ring_full;
  }
  return drops;
}

}  // namespace flowtrack::cli
