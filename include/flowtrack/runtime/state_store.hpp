// The state file of a live NAT or stateful load balancer (`flowtrack run --dpdk --state FILE`): read
// once at the start, before the workers serve, and written once at the stop, after they have stopped
// (nf/state_file.hpp holds the format and its checks).
//
// At the start the file must be there and be accepted: of this version, of this function, whole, its
// checksums right, saved under this configuration (state_config_hash.hpp). Its timers lose the time the
// process was down. An accepted file is renamed FILE.restored as it is taken, so that a process that
// dies without writing its state (a crash, kill -9) does not leave behind a file whose state is no
// longer the one on the wire: the next start then finds no file and says so.
//
// Starting without state is the operator's call (`--start-empty`): without it a missing or refused file
// stops the start with the reason; with it the run starts empty, a refused file kept as FILE.refused.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowtrack/nf/lb_snapshot.hpp"
#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"

namespace flowtrack {

struct StateFileOptions {
  std::string path;          // "": no state kept across a restart
  bool start_empty = false;  // a missing or refused file: start without state rather than not at all
  // The state taken from the process running on the control socket once this one is ready to serve
  // (a hand-over, hand_over.hpp), rather than read at the start.
  bool take_over = false;
};

// What a start begins with: one snapshot per worker, or none (empty), and for the operator what was
// restored or why nothing was.
template <class Snapshot>
struct StartingState {
  std::vector<Snapshot> workers;
  std::string note;
};

// A missing or refused file without start_empty: the reason, and what the operator may do.
struct StateRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throw StateRefused, or std::runtime_error when a file cannot be renamed.
StartingState<NatSnapshot> load_nat_state(const StateFileOptions& options, const NatConfig& config, unsigned workers,
                                          std::int64_t unix_now_ns);
StartingState<LbSnapshot> load_lb_state(const StateFileOptions& options, const StatefulLbConfig& config, unsigned workers,
                                        std::int64_t unix_now_ns);

// Write the workers' snapshots to `path`, whole or not at all. Throw std::runtime_error naming the file.
void save_nat_state(const std::string& path, std::span<const NatSnapshot> workers, const NatConfig& config, std::int64_t unix_now_ns);
void save_lb_state(const std::string& path, std::span<const LbSnapshot> workers, const StatefulLbConfig& config,
                   std::int64_t unix_now_ns);

// The Unix clock, in ns.
std::int64_t unix_now_ns();

}  // namespace flowtrack
