// Building and running a network function by name: the one place where `flowtrack run` and
// `flowtrack bench nf` turn (function, connection table, aging, scaling) names into types, so both run
// exactly the same code.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/runtime/nf_runner.hpp"
#include "nf_names.hpp"

namespace flowtrack::cli {

struct NfChoice {
  std::string nf = "lb";         // fwd, slb, lb, nat, concury
  std::string table = "cuckoo";  // lb and nat: the connection table, any table that is not many_writers
  std::string aging = "wheel";   // lb and nat: the tracker's aging policy, wheel or heap
  std::string scaling = "sharded";  // sharded or spinlock (lb and nat; the stateless ones are sharded)
  unsigned workers = 1;
  bool audit = false;  // concury: check every connection against an exact map of its first backend
  std::string control_plane = "worker";  // concury: worker or thread (control_plane_names())
  friend bool operator==(const NfChoice&, const NfChoice&) = default;
};

// The configuration of each function; only the chosen one's is read.
struct NfConfigs {
  StatelessLbConfig slb;
  StatefulLbConfig lb;  // the stateful LB's, and Concury's
  NatConfig nat;
};

// What a run of a function gives: each worker's result (backends: lb connections per backend, slb
// packets per backend; live and peak connections), the answers of the trace that could not be
// presented to the function and were left out (replay_rehearsal.hpp), and those that tunnel-mode
// backends send straight to the clients, which were left out too (direct_returns.hpp).
struct NfRun {
  std::vector<WorkerResult> workers;
  std::uint64_t unpresentable = 0;
  std::uint64_t direct_return = 0;

  // Every dropped packet of the run once, by reason: the parser's, the function's, replay_unpresentable,
  // and a dispatched run's ring_full; reasons that counted nothing are left out.
  std::map<std::string, std::uint64_t> drops_by_reason() const;
};

// Throws UserError naming the problem when a name is unknown or does not apply (a many_writers table,
// spinlock scaling of a stateless function). The stateful LB replays a trace captured on its client
// side (lb_answers.hpp), the NAT one captured on its inside link (nat_answers.hpp); the load balancers
// leave out the answers of their tunnel-mode services (direct_returns.hpp).
NfRun run_nf(const NfChoice& choice, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
             const NfRunOptions& options);

}  // namespace flowtrack::cli
