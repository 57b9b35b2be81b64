// What one worker counts: packets, drops by reason, table outcomes and TSC cycles by stage. Each worker
// owns its counters (one cache-line-aligned struct, written by that worker only) and the runner adds
// them up after the workers stopped: no shared write on the hot path.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

// Why a packet was not tracked, beyond the parser's own reasons.
enum class RuntimeDrop : std::uint8_t {
  not_ipv4,     // parsed, but the runtime's tables hold IPv4 keys
  table_full,   // a new flow found no room (InsertStatus::full)
  count_,
};

std::string_view runtime_drop_name(RuntimeDrop drop);

inline constexpr std::size_t kRuntimeDropCount = static_cast<std::size_t>(RuntimeDrop::count_);

struct alignas(64) WorkerCounters {
  std::uint64_t packets = 0;   // taken from the source
  std::uint64_t tracked = 0;   // looked up and accounted to a flow
  std::uint64_t bytes = 0;     // wire bytes of tracked packets
  std::uint64_t bursts = 0;
  std::uint64_t new_flows = 0;
  std::uint64_t expired_flows = 0;
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};  // index ParseStatus (ok stays 0)
  std::array<std::uint64_t, kRuntimeDropCount> runtime_drops{};
  std::array<std::uint64_t, kNfStageCount> stage_cycles{};  // by NfStage
  std::uint64_t busy_cycles = 0;  // first to last burst of this worker, TSC
  std::uint64_t idle_polls = 0;   // software steering: polls of an empty ring

  std::uint64_t drops() const;
  WorkerCounters& operator+=(const WorkerCounters& other);
};

}  // namespace flowtrack
