// The health checks' state machine (the control plane's, runtime/health_checker.hpp, which runs it with
// real probes on a thread of its own), on a clock its caller gives: when each backend is due for a
// probe, what each result does to the backend's state, and which pool changes follow.
//
// Each backend of a checked service (one per service name and backend name: a [[service]] with several
// VIPs or ports is several services of one name, probed once, at its first VIP and port) is a target
// (HealthTarget: probed at the backend's address, or in a tunnel-mode service's tunnel at the VIP):
// probed every `interval` (drawn within +- jitter, from a seeded generator so that tests are
// repeatable), never twice at once.
// States: up (as configured at start) and down. An up target that fails `fall` probes in a row goes down;
// a down one that succeeds `rise` in a row comes up. A transition becomes a pool change (PoolAction::down
// or up, nf/pool_schedule.hpp) for the data plane, which applies it to every service of the name.
//
// When every target of a service is down, the service's `all_down` decides: drop lets the last one go
// down too (the pool is empty, its packets are dropped and counted as no_backend); fail_open holds
// the last one's change back, so the data plane keeps the last pool it had. Either way the service's
// all_down_events counts the times it happened. When a target comes up again, what was held back goes
// out: the data plane's pool follows the targets' states again.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/util/random.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

// What a probe connects to and checks. A NAT-mode service's backend is probed at its own address; a
// tunnel-mode service's at the VIP, inside the service's tunnel to the backend's address, as its clients
// reach it (probe_tunnel.hpp).
struct HealthTarget {
  std::string service;  // the service's name
  std::string backend;  // the backend's name
  std::uint32_t address = 0;  // network order: the backend's
  std::uint16_t port = 0;     // network order
  HealthCheckConfig check;
  std::uint32_t vip = 0;  // network order: the service's (its first, for a service of several VIPs)
  TunnelConfig tunnel;    // the service's way to its backends

  // The address the probe connects to.
  std::uint32_t destination() const { return tunnel.tunnels() ? vip : address; }
};

// A target's state and what it counted.
struct TargetHealth {
  bool up = true;
  bool probing = false;           // a probe started and not reported yet
  std::uint32_t in_a_row = 0;     // results in a row against its state (failures while up, successes while down)
  std::uint64_t probes = 0, failures = 0, transitions = 0;
  Nanos next_probe = 0;
};

// A checked service's state and what it counted.
struct ServiceHealth {
  std::string name;
  AllDown all_down_policy = AllDown::fail_open;
  bool all_down = false;             // every target down now
  std::uint64_t all_down_events = 0; // times every target went down
};

class HealthMonitor {
 public:
  // The checked services of `services` (those with a `health`); each target's first probe is due at a
  // time drawn within the interval after `start`, so that many backends are not probed at once.
  HealthMonitor(std::span<const ServiceConfig> services, Nanos start, std::uint64_t seed = 1);

  std::span<const HealthTarget> targets() const { return targets_; }
  std::span<const TargetHealth> health() const { return health_; }
  std::span<const ServiceHealth> services() const { return services_; }

  // Marks every target due by `now` (and not being probed) as probing and calls start(index, target) for
  // each; the caller reports each started probe's result with report().
  template <class Start>
  void start_due(Nanos now, Start&& start) {
    for (std::size_t t = 0; t < targets_.size(); ++t) {
      TargetHealth& h = health_[t];
      if (h.probing || h.next_probe > now) continue;
      h.probing = true;
      h.next_probe = now + draw_interval(targets_[t].check);
      start(t, targets_[t]);
    }
  }

  // The earliest time a target not being probed is due (kNever when every one is being probed).
  Nanos next_due() const;

  // A started probe's result: its target's state moves, and the pool changes it brings (none, or one or
  // more for the target's service when a transition or a fail-open hold changes the pool) are appended
  // to `changes`. The target's next probe is due an interval after this one started, whenever it ended.
  void report(std::size_t target, bool ok, std::vector<PoolChange>& changes);

 private:
  Nanos draw_interval(const HealthCheckConfig& check);
  // The changes that bring the data plane's pool of service `s` to what its targets' states ask for.
  void settle(std::size_t s, std::vector<PoolChange>& changes);

  std::vector<HealthTarget> targets_;
  std::vector<TargetHealth> health_;
  std::vector<ServiceHealth> services_;
  std::vector<std::size_t> service_of_;  // target -> index into services_
  std::vector<bool> in_pool_;            // target -> up in the data plane's pool (what the changes said)
  Random rng_;
};

}  // namespace flowtrack
