// A live data plane's counters as DPDK telemetry commands, read by `dpdk-telemetry.py` (Debian's
// dpdk-dev ships it) or any client of EAL's telemetry socket (<runtime dir>/dpdk_telemetry.v2):
//
//   /flowtrack/counters   {"nf": "nat", "packets_in": ..., "packets_to_function": ..., "packets_out": ...,
//                          "connections": ..., "connections_live": ..., "arp_answered": ...,
//                          "arp_asked": ..., "handed_off": ..., "handoff_backoffs": ...,
//                          "drops": <their sum>}
//   /flowtrack/drops      {"<reason>": n, ...}: the drops by reason
//   /flowtrack/backends   {"<backend>": n, ...}: lb only, connections sent to each backend (a
//                          name's characters other than letters, digits, '_' and '/', which
//                          telemetry does not take in a key, are written '_')
//   /flowtrack/backend_connections  {"<backend>": {"opening": n, "established": n, "closing": n}, ...}:
//                          lb only, each backend's live connections by phase
//
// The commands answer from the board the worker publishes at every tick (live_counters.hpp): DPDK's
// telemetry thread never reads the worker's own counters. Telemetry cannot unregister a command, so
// the board must outlive every request: register_telemetry_counters takes one that lives as long as
// the process. Without EAL's telemetry (--no-telemetry) the commands are registered and never called.
#pragma once

#include "flowtrack/runtime/live_counters.hpp"

namespace flowtrack {

// Registers the commands on `board` (once per process; a later call changes the board they read).
// Throws std::runtime_error if telemetry refuses them.
void register_telemetry_counters(const CounterBoard& board);

}  // namespace flowtrack
