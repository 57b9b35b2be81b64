// Building and replaying a network function by name: the one place where `flowtrack run` and
// `flowtrack bench nf` turn (function, connection table, aging, sharing) into types and hand them to the
// engine's replay (runtime/replay_run.hpp), so both run exactly the same code.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flowtrack/nf/config_memory.hpp"
#include "flowtrack/nf/config_text.hpp"
#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/nf_kind.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/runtime/replay_run.hpp"
#include "nf_names.hpp"

namespace flowtrack::cli {

struct NfChoice {
  NfKind nf = NfKind::lb;
  std::string table = "cuckoo";  // lb and nat: the connection table, any table that is not many_writers
  std::string aging = "wheel";   // lb and nat: the tracker's aging policy, wheel or heap
  std::string scaling = "sharded";  // sharded or spinlock (lb and nat; the stateless ones are sharded)
  unsigned workers = 1;
  std::string control_plane = "worker";  // concury: worker or thread (control_plane_names())
  bool nat_sync_events = false;  // nat, wheel aging: its pair's sync events made, into a sink that discards them
  bool lb_sync_events = false;   // lb: its exceptions shared (lb_exceptions.hpp), the events into a sink that discards them
  friend bool operator==(const NfChoice&, const NfChoice&) = default;
};

// The configuration of each function; only the chosen one's is read.
struct NfConfigs {
  StatelessLbConfig slb;
  StatefulLbConfig lb;  // the stateful LB's, and Concury's
  NatConfig nat;
};

// What a replay of a function gives: each worker's report (backends: lb connections per backend, slb
// packets per backend; live and peak connections), the answers of the trace that could not be presented
// to the function and were left out (replay_rehearsal.hpp), and those that tunnel-mode backends send
// straight to the clients, which were left out too (direct_returns.hpp).
struct NfRun {
  std::vector<WorkerReport> workers;
  std::uint64_t unpresentable = 0;
  std::uint64_t direct_return = 0;

  // Every dropped packet of the run once, by reason: the parser's, the function's, replay_unpresentable,
  // and a dispatched run's ring_full; reasons that counted nothing are left out.
  std::map<std::string, std::uint64_t> drops_by_reason() const;
};

// Reads the configuration of function `nf` from `text`: each function reads its own sections, and the
// forwarder, which has none, still refuses a file that is not a configuration (ConfigError).
NfConfigs load_nf_configs(NfKind nf, const ConfigText& text);

// What `instances` instances of `nf` take (nf/config_memory.hpp; nothing for the forwarder): the
// commands refuse it with check_footprint before anything is built, and announce it just before they
// build it.
Footprint nf_footprint(NfKind nf, const NfConfigs& configs, unsigned instances);
// A line on stderr, "flowtrack: building lb: ...; this takes a few seconds", when the build does.
void announce_slow_build(NfKind nf, const Footprint& footprint);

// Throws UserError naming the problem when a name does not apply (a many_writers table, spinlock
// scaling of a stateless function, a check of a function without backends). The stateful LB and Concury
// replay a trace captured on their client side (lb_answers.hpp), the NAT one captured on its inside link
// (nat_answers.hpp); the LB's [[change]] schedule is the replay's (options.changes). The load balancers
// leave out the answers of their tunnel-mode services (direct_returns.hpp).
NfRun run_nf(const NfChoice& choice, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
             const ReplayOptions& options);

}  // namespace flowtrack::cli
