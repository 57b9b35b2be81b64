// The network-function contract, as FlowTable is the tables' (table/flow_table.hpp): what the runtime
// (runtime/nf_runner.hpp), the fuzz target and the shared behaviour suite (tests/nf/function_contract_test.cpp)
// call on every function, so that a new function plugs in by satisfying it.
//
//   process(packet, now)   one parsed packet (NfPacket, status ok) at time `now`: a Verdict
//                          (nf_packet.hpp); the frame may be rewritten in place, or regrown within its
//                          capacity for a reply. Every packet is counted once in counters(): forwarded
//                          (rewritten or passed), dropped by a named reason, or held.
//   expire(now, budget)    ages out what went idle by `now`, at most `budget` timers; returns how many
//                          connections ended. Called between packets, never inside one.
//   counters()             what the function counted (NfCounters).
//   release(emit)          only for a function that holds packets (HoldsPackets): hands out each held
//                          packet that may now go on as emit(frame, wire_length); the runtime calls it
//                          after every process().
//
// Time never goes back: `now` is non-decreasing across calls to one instance.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/nf/nf_packet.hpp"

namespace flowtrack {

// Timers a function handles per expire() call unless told otherwise: enough to keep up with any
// connection rate a core sustains between two calls, few enough to bound the pause.
inline constexpr std::size_t kDefaultExpireBudget = 4096;

// What release() is given: a held frame, ready to go, and its wire length.
using HeldPacketEmit = void (*)(std::span<const std::uint8_t> frame, std::uint32_t wire_length);

template <class Nf>
concept NetworkFunction = requires(Nf& nf, const Nf& const_nf, NfPacket& packet, Nanos now, std::size_t budget) {
  { nf.process(packet, now) } -> std::same_as<Verdict>;
  { nf.expire(now, budget) } -> std::same_as<std::size_t>;
  { const_nf.counters() } -> std::convertible_to<NfCounters>;
};

template <class Nf>
concept HoldsPackets = NetworkFunction<Nf> && requires(Nf& nf, HeldPacketEmit emit) { nf.release(emit); };

}  // namespace flowtrack
