// What one worker counts, for every source and function the engine runs (runtime/engine.hpp): the
// loop's packets, parse drops and cycles, the function's own counters (NfCounters), and what a
// dispatcher did to the worker. Each worker owns its record (cache-line aligned, written by that worker
// only); the engine adds them up after the run, and a live run's control plane reads copies the workers
// leave on request (runtime/mailbox.hpp): no shared write on the hot path.
#pragma once

#include <array>
#include <cstdint>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

struct alignas(64) WorkerCounters {
  std::uint64_t packets = 0;  // taken from the source
  std::uint64_t bursts = 0;
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};  // by ParseStatus (ok stays 0)
  std::array<std::uint64_t, kNfStageCount> stage_cycles{};  // by NfStage, when the run clocks its stages
  std::uint64_t busy_cycles = 0;  // TSC, the worker's first burst to its last
  std::uint64_t idle_polls = 0;   // polls of an empty ring
  NfCounters function;            // the function's, read when the worker stopped or published
  // A dispatched run's (runtime/dispatcher.hpp): packets for this worker dropped at its full ring,
  // connections LAPS moved onto it, packets it finished after a later one of their flow.
  std::uint64_t ring_full = 0;
  std::uint64_t migrations_in = 0;
  std::uint64_t out_of_order = 0;

  // Every packet dropped: by the parser, by the function, at the ring.
  std::uint64_t drops() const;
  // Packets per second over the worker's busy time, in millions.
  double mpps() const;
  WorkerCounters& operator+=(const WorkerCounters& other);
};

}  // namespace flowtrack
