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

// A source whose packets stay valid, buffers untouched, while it hands out the next burst (a replay,
// whose every packet has a buffer of its own): the loop may take burst n+1 before burst n is done.
template <class Source>
concept KeepsPacketsAcrossBursts = Source::kKeepsPacketsAcrossBursts;

// One burst taken from the source and parsed: `parsed` packets at the front (those that did not parse
// are counted and closed over), `taken` from the source in all.
struct TakenBurst {
  std::size_t taken = 0;
  std::size_t parsed = 0;
  Nanos last_time = 0;  // of the last packet taken
};

template <class Source>
TakenBurst take_burst(Source& source, std::span<NfPacket> burst, LinkType link, BurstLoopCounters& counters) {
  TakenBurst taken{.taken = source.next(burst)};
  if (taken.taken == 0) return taken;
  taken.last_time = burst[taken.taken - 1].time;
  for (std::size_t i = 0; i < taken.taken; ++i) {
    const ParseStatus status = parse_frame(burst[i].frame, link, burst[i].parsed);
    if (status != ParseStatus::ok) {
      ++counters.parse_drops[static_cast<std::size_t>(status)];
      continue;
    }
    burst[i].hash = packet_hash(burst[i].parsed);
    if (taken.parsed != i) burst[taken.parsed] = burst[i];  // close the gap an unparsable packet left
    ++taken.parsed;
  }
  return taken;
}

// Source: next(std::span<NfPacket>) fills frame, capacity, wire_length, time and slot of up to that many
// packets and returns how many (0: done), and link_type(). Out: a BurstOutput that also marks stages.
//
// Two bursts in flight, where the source keeps its packets across bursts and the function prefetches
// lookups (network_function.hpp): the next burst is taken, parsed and its lookups prefetched before this
// one goes through the function, so that the next burst's table misses overlap with this one's work.
// Bursts of one, the per-packet baseline, never look ahead. Either way the function sees the same
// bursts in the same order, and expiry the same packet counts and times.
template <NetworkFunction Nf, class Source, BurstOutput Out>
void run_burst_loop(Nf& nf, Source& source, Out& out, std::size_t burst_size, BurstLoopCounters& counters,
                    StageClock& clock) {
  constexpr bool kCanLookAhead = KeepsPacketsAcrossBursts<Source> && PrefetchesLookups<Nf>;
  const bool look_ahead = kCanLookAhead && burst_size > 1;
  std::array<std::array<NfPacket, kMaxBurst>, 2> bursts;
  const LinkType link = source.link_type();
  const auto take = [&](std::size_t which) {
    return take_burst(source, std::span(bursts[which]).first(burst_size), link, counters);
  };
  std::size_t current = 0;  // which of `bursts` holds the burst about to be processed
  clock.start();
  TakenBurst taken = take(current);
  while (taken.taken != 0) {
    TakenBurst upcoming;
    if constexpr (kCanLookAhead) {
      if (look_ahead) {
        upcoming = take(current ^ 1);
        nf.prefetch_lookups(std::span<const NfPacket>(bursts[current ^ 1]).first(upcoming.parsed));
      }
    }
    clock.stage_done(NfStage::parse);
    if (taken.parsed != 0) nf.process_burst(std::span(bursts[current]).first(taken.parsed), out);
    const std::uint64_t before = counters.packets;
    counters.packets += taken.taken;
    ++counters.bursts;
    if (counters.packets / kExpireEvery != before / kExpireEvery) nf.expire(taken.last_time, kDefaultExpireBudget);
    clock.stage_done(NfStage::aging);
    if (!look_ahead) upcoming = take(current ^ 1);  // charged to the next parse stage
    taken = upcoming;
    current ^= 1;
  }
}

}  // namespace flowtrack
