// A schedule of backend pool changes that a replay applies to a load balancer as its packet clock
// passes each change's time: `flowtrack run` replays a trace, and this is how a pool change happens
// "while it runs" at a chosen point of the trace (the [[change]] tables of the LB configuration).
//
// Times count from the first packet the balancer sees (with sharded workers, each worker's first
// packet: the workers' clocks start within microseconds of one another on a real trace). A change
// names a service by name and applies to every service of that name (a service with several VIPs or
// ports is several services). Actions: add (a new backend, or one that was removed before: back at its
// address and port, it takes its old entry again, backend_pool.hpp), remove, drain (weight 0: it stays
// configured and keeps its connections), weight (a new weight), down (out of service, as a failed health
// check marks it: no new connection, and the stateful LB moves its UDP flows; its weight is kept) and up
// (back in service with the weight it has).
//
// The schedule is checked once, before any packet (check_pool_changes), by replaying it on the backend
// names: so applying a change cannot fail, and a mistake in the configuration is an error at start
// rather than a silent no-op minutes into a run.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

enum class PoolAction : std::uint8_t { add, remove, drain, weight, down, up };

std::optional<PoolAction> pool_action_from_name(std::string_view name);

struct PoolChange {
  Nanos at = 0;         // after the first packet
  std::string service;  // a service name
  PoolAction action = PoolAction::weight;
  BackendConfig backend;  // name always; address, port and weight for add; weight for weight
};

// Maglev needs a table of more than 100 entries per backend for its shares to be even (maglev.hpp).
constexpr std::size_t max_backends_for(std::uint32_t maglev_size) { return maglev_size / 100; }

// A change the schedule cannot apply: its index in the list and what is wrong, with the key at fault
// (a [[change]] table's key: "backend", "service", ...).
struct PoolChangeProblem {
  std::size_t index;
  std::string key;
  std::string problem;
};

// Replays `changes`, in their order, on the backend names of `services`: every change must name a
// service that exists and a backend it can apply to (add: a name not currently in the pool; the others:
// a name in the pool), and no service may have more than max_backends_for(maglev_size) backends in
// its pool at any time.
std::optional<PoolChangeProblem> check_pool_changes(std::span<const PoolChange> changes,
                                                    std::span<const ServiceConfig> services, std::uint32_t maglev_size);

// Applies one change to every service of its name. The change must have passed check_pool_changes.
void apply_pool_change(const PoolChange& change, std::span<Service> services);

// A function whose pool of backends can change while it runs: apply(change) between two bursts, with a
// change that has passed check_pool_changes against the changes applied before it.
template <class Nf>
concept TakesPoolChanges = requires(Nf& nf, const PoolChange& change) { nf.apply(change); };

// A checked schedule of pool changes and where a run is in it. The replay driver holds one per worker
// (runtime/scheduled_source.hpp) and hands each change to the worker's function between two bursts, as
// the packet clock passes it; the functions themselves know no schedule (TakesPoolChanges,
// network_function.hpp).
//
// Times count from the first packet: the first advance() sets the origin. next_due() is the time from
// which advance() has something to apply (0 before the first call, kNever once the schedule is spent),
// so a caller compares one packet time against it and calls advance() only when it is reached.
class PoolChangeSchedule {
 public:
  PoolChangeSchedule() = default;
  // Sorts `changes` by time (stable) and checks them against `services` (check_pool_changes); throws
  // std::invalid_argument naming the change and the problem.
  PoolChangeSchedule(std::vector<PoolChange> changes, std::span<const ServiceConfig> services, std::uint32_t maglev_size);

  bool empty() const { return changes_.empty(); }
  std::span<const PoolChange> changes() const { return changes_; }
  Nanos next_due() const { return next_at_; }

  // Calls apply(change) for every change due by `now`, in order.
  template <class Apply>
  void advance(Nanos now, Apply&& apply) {
    if (!started_) {
      started_ = true;
      origin_ = now;
    }
    // now >= next_at_ >= origin_ here (or origin_ was just set to now): the difference cannot wrap.
    while (next_ < changes_.size() && now - origin_ >= changes_[next_].at) apply(changes_[next_++]);
    next_at_ = next_ < changes_.size() ? origin_ + changes_[next_].at : kNever;
  }

 private:
  std::vector<PoolChange> changes_;
  bool started_ = false;
  Nanos origin_ = 0;
  std::size_t next_ = 0;  // changes_[next_] is the next change due, at origin_ + its `at` (next_at_)
  Nanos next_at_ = 0;
};

// Applies to `nf` every change of `schedule` due by `now`: for whoever shows a function its packets one
// at a time (the replay's rehearsal, tests); the engine plays a schedule into a worker's mailbox instead
// (runtime/scheduled_source.hpp).
template <TakesPoolChanges Nf>
void apply_due_changes(PoolChangeSchedule& schedule, Nf& nf, Nanos now) {
  if (now >= schedule.next_due()) schedule.advance(now, [&](const PoolChange& change) { nf.apply(change); });
}

}  // namespace flowtrack
