// The data plane's one loop: every worker of every network function runs it, whatever the source of its
// packets (a replayed trace today, DPDK ports through the same code). A burst comes in, is parsed and
// hashed packet by packet (packets that do not parse are counted and go no further), goes through the
// function's stages (process_burst, network_function.hpp) and leaves as verdicts in the output; then,
// once every kExpireEvery packets, the function ages out what went idle.
//
// Expiry depends on packets, not bursts, so that the output of a trace does not depend on the burst
// size it is cut into (1 and any divisor of kExpireEvery give the same calls at the same packets).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/stage_clock.hpp"

namespace flowtrack {

inline constexpr std::size_t kExpireEvery = 32;

struct BurstLoopCounters {
  std::uint64_t packets = 0;  // taken from the source
  std::uint64_t bursts = 0;
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};  // by ParseStatus (ok stays 0)
};

// Source: next(std::span<NfPacket>) fills frame, capacity, wire_length, time and slot of up to that many
// packets and returns how many (0: done), and link_type(). Out: a BurstOutput that also marks stages.
template <NetworkFunction Nf, class Source, BurstOutput Out>
void run_burst_loop(Nf& nf, Source& source, Out& out, std::size_t burst_size, BurstLoopCounters& counters,
                    StageClock& clock) {
  std::array<NfPacket, kMaxBurst> burst;
  const LinkType link = source.link_type();
  clock.start();
  while (const std::size_t n = source.next(std::span(burst).first(burst_size))) {
    const Nanos last_time = burst[n - 1].time;
    std::size_t parsed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const ParseStatus status = parse_frame(burst[i].frame, link, burst[i].parsed);
      if (status != ParseStatus::ok) {
        ++counters.parse_drops[static_cast<std::size_t>(status)];
        continue;
      }
      burst[i].hash = packet_hash(burst[i].parsed);
      if (parsed != i) burst[parsed] = burst[i];  // close the gap an unparsable packet left
      ++parsed;
    }
    clock.stage_done(NfStage::parse);
    if (parsed != 0) nf.process_burst(std::span(burst).first(parsed), out);
    const std::uint64_t before = counters.packets;
    counters.packets += n;
    ++counters.bursts;
    if (counters.packets / kExpireEvery != before / kExpireEvery) nf.expire(last_time, kDefaultExpireBudget);
    clock.stage_done(NfStage::aging);
  }
}

}  // namespace flowtrack
