// The network-function contract, as FlowTable is the tables' (table/flow_table.hpp): what the runtime
// (runtime/burst_loop.hpp), the fuzz target and the shared behaviour suite (tests/runtime/function_contract_test.cpp)
// call on every function, so that a new function plugs in by satisfying it.
//
//   process_burst(burst, out)  a burst of parsed packets (NfPacket: status ok, time and hash set), in
//                          arrival order. For each packet, in that order, the function calls
//                          out.verdict(packet, verdict) exactly once (nf_packet.hpp: the frame may be
//                          rewritten in place, or regrown within its capacity for a reply), and hands
//                          each held packet that may now go on (already translated) to
//                          out.held(frame, wire_length) right after the verdict of the packet that
//                          released it. Packets of one connection keep their order and see each other's
//                          state, as if the burst were given one packet at a time: the output of a trace
//                          does not depend on how it is cut into bursts. out.stage_done(stage) marks the
//                          end of each of the function's stages (lookup, state, rewrite) for the cycle
//                          split; it may cost a clock read, so a function calls it a few times per
//                          burst, never per packet.
//   expire(now, budget)    ages out what went idle by `now`, at most `budget` timers; returns how many
//                          connections ended. Called between bursts, never inside one.
//   counters()             what the function counted (NfCounters): every packet once, forwarded
//                          (rewritten or passed), dropped by a named reason, or held.
//
// Time never goes back: packet times and `now` are non-decreasing across calls to one instance.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

// Timers a function handles per expire() call unless told otherwise: enough to keep up with any
// connection rate a core sustains between two calls, few enough to bound the pause.
inline constexpr std::size_t kDefaultExpireBudget = 4096;

// The most packets one process_burst() call takes, and how many a burst carries unless told otherwise:
// as many as a NIC's receive call typically hands over, enough for one packet's cache misses to overlap
// the others'.
inline constexpr std::size_t kMaxBurst = 64;
inline constexpr std::size_t kDefaultBurst = 32;
static_assert(kDefaultBurst <= kMaxBurst);

// The stages of a burst, in order, for the cycle split: the runtime's (parse: link to transport headers
// and the flow hash; aging: expire()) around the function's own (lookup: the connection table; state:
// connection state, policy and creation; rewrite: headers and verdicts).
enum class NfStage : std::uint8_t { parse, lookup, state, rewrite, aging, count_ };
inline constexpr std::size_t kNfStageCount = static_cast<std::size_t>(NfStage::count_);
std::string_view nf_stage_name(NfStage stage);

// The hash every function and table of the data plane uses for a packet's flow (the runtime computes it
// once per packet, as a NIC's RSS hash would come with it).
inline std::uint32_t packet_hash(const ParsedPacket& parsed) { return parsed.ip_version == 4 ? flow_hash(parsed.key4) : 0; }

template <class Out>
concept BurstOutput = requires(Out& out, const NfPacket& packet, Verdict verdict, std::span<const std::uint8_t> frame,
                               std::uint32_t wire_length, NfStage stage) {
  out.verdict(packet, verdict);
  out.held(frame, wire_length);
  out.stage_done(stage);
};

// The least a BurstOutput has: what the NetworkFunction concept checks a function against.
struct BurstOutputArchetype {
  void verdict(const NfPacket&, Verdict) {}
  void held(std::span<const std::uint8_t>, std::uint32_t) {}
  void stage_done(NfStage) {}
};

template <class Nf>
concept NetworkFunction = requires(Nf& nf, const Nf& const_nf, std::span<NfPacket> burst, BurstOutputArchetype& out,
                                   Nanos now, std::size_t budget) {
  nf.process_burst(burst, out);
  { nf.expire(now, budget) } -> std::same_as<std::size_t>;
  { const_nf.counters() } -> std::convertible_to<NfCounters>;
};

// A burst of one, for whoever holds a single packet (tests, the replay rehearsal): sets the packet's time
// and hash, returns its verdict, and hands the held packets it releases to on_held(frame, wire_length).
template <NetworkFunction Nf, class OnHeld>
Verdict process_packet(Nf& nf, NfPacket& packet, Nanos now, OnHeld&& on_held) {
  struct One {
    OnHeld& on_held;
    Verdict given = Verdict::drop;
    void verdict(const NfPacket&, Verdict v) { given = v; }
    void held(std::span<const std::uint8_t> frame, std::uint32_t wire_length) { on_held(frame, wire_length); }
    void stage_done(NfStage) {}
  } out{on_held};
  packet.time = now;
  packet.hash = packet_hash(packet.parsed);
  nf.process_burst(std::span(&packet, 1), out);
  return out.given;
}

template <NetworkFunction Nf>
Verdict process_packet(Nf& nf, NfPacket& packet, Nanos now) {
  return process_packet(nf, packet, now, [](std::span<const std::uint8_t>, std::uint32_t) {});
}

}  // namespace flowtrack
