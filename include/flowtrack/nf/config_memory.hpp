// What a function's configuration takes once built, estimated from the configuration alone: so that a
// size the machine cannot hold is refused, with both figures, before anything is allocated (rather
// than the kernel killing the run tens of seconds into its set-up), and a build that takes seconds
// says so first.
//
// The figures per item were measured on the default connection table and aging (cuckoo, timer wheel:
// peak resident memory of `run` over max_connections or max_sessions of 1 K and 4 M, on the campus
// trace), rounded up: a connection of the stateful LB or a NAT session 225 bytes, a NAT mapping 58,
// Concury about 9 bytes per configured connection and a little under 1 MiB per service. Other tables
// take more or less; the estimate is for refusing what cannot fit, not for sizing a machine.
#pragma once

#include <cstdint>
#include <string>

#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"

namespace flowtrack {

struct Footprint {
  std::uint64_t bytes = 0;           // all instances together
  std::uint64_t maglev_entries = 0;  // Maglev entries to fill, all instances (a service of the same pool as the one before it copies its table)
  std::string what;                  // "2 instances of 16 services with Maglev tables of 65537 entries and 200000 connections"
};

// `instances`: how many copies of the function the run builds (one per worker when sharded).
Footprint stateless_lb_footprint(const StatelessLbConfig& config, unsigned instances);
Footprint stateful_lb_footprint(const StatefulLbConfig& config, unsigned instances);
Footprint concury_footprint(const StatefulLbConfig& config, unsigned instances);
Footprint nat_footprint(const NatConfig& config, unsigned instances);

// Throws ConfigError, "<source>: <what> would take about 41.2 GiB; this machine has 22.3 GiB available
// (MemAvailable)", when the footprint's bytes exceed what the machine has.
void check_footprint(const Footprint& footprint, const std::string& source);

// Whether the build takes about a second or more (a 16M-entry Maglev table, a table of millions of
// connections), which the commands announce on stderr before they start it.
bool builds_slowly(const Footprint& footprint);

}  // namespace flowtrack
