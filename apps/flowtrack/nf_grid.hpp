// The stateful functions' part of the launch grid (nf_launch.hpp): for one function and one tracker
// aging policy, every connection table of this build's grid (lab/registry.hpp) under both sharings.
// Each (function, aging) pair is explicitly instantiated in a translation unit of its own
// (nf_grid_<function>_<aging>.cpp), so that a build compiles each instantiation once and its jobs share
// the work.
#pragma once

#include "nf_launch.hpp"

namespace flowtrack::cli {

// `shared`: one instance under a lock, else one per worker. Throw std::invalid_argument for a table outside the
// grid or one that brings its own concurrency.
template <class Aging>
NfRun run_stateful_lb(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
                      const PacketPartition& partition, const ReplayOptions& options);
template <class Aging>
NfRun run_nat(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
              const PacketPartition& partition, const ReplayOptions& options);
// The NAT with the wheel aging, its pair's sync events made into a sink that discards them
// (discarding_nat_events.hpp): what a NAT of a pair pays on its workers, set against run_nat's in
// `bench nf --nat-sync-events`. One aging only: each instantiation over the table grid costs the build.
NfRun run_nat_with_sync_events(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
                               const PacketPartition& partition, const ReplayOptions& options);
// Concury keeps no connection table: one instantiation (nf_concury.cpp).
NfRun run_concury(const NfChoice& choice, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
                  const ReplayOptions& options);

}  // namespace flowtrack::cli
