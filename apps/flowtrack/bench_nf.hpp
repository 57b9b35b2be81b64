// `flowtrack bench nf`: its options and entry point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowtrack::cli {

struct NfBenchOptions {
  std::vector<std::string> nfs{"fwd", "slb", "lb", "nat"};
  std::vector<std::string> tables;  // empty: a default set (a smaller one with --quick)
  std::vector<std::string> agings{"wheel"};
  std::vector<std::string> scalings{"sharded", "spinlock"};
  std::vector<std::string> control_planes{"worker"};  // concury's: worker, thread
  std::vector<unsigned> workers;
  std::vector<std::size_t> bursts{1, 32};  // packets per burst; 1: the per-packet path
  std::uint32_t flows = 20'000;
  unsigned windows = 4;
  std::size_t connections = 0;  // when set: windows enough for this many connections alive at once
  unsigned reps = 3;
  bool stages = true;  // one more run of each configuration, clocking its stages
  bool quick = false;
  bool own_backends = false;  // every service on three backends of its own (default: three for all)
  std::vector<std::string> forwards{"nat"};  // the load balancers' forwarding modes: nat, ipip, gue
  std::uint64_t syn_flood = 0;               // spoofed SYNs mixed into the trace, measured beside it (0: none)
  // lb: the limits of new connections a second a worker to measure, each a configuration (0: none).
  std::vector<std::uint64_t> new_connection_rates{0};
  // nat: each configuration with the wheel aging once more with its pair's sync events made (into a sink
  // that discards them), against the same without.
  bool nat_sync_events = false;
  // lb: each configuration once more with its connections off today's choice shared (their events into
  // a sink that discards them, no peer's held), against the same without; every LB row then drains the
  // first backend of the first service half way through the trace, so that there are some.
  bool lb_sync_events = false;
  bool json = false;
};

void run_nf_bench(NfBenchOptions o);

}  // namespace flowtrack::cli
