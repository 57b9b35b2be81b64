// The data plane's one loop: every worker of every network function runs it, whatever the source of its
// packets (a replayed trace, a dispatcher's ring, DPDK ports). A burst comes in; between() runs (the
// engine handles the worker's mail there: pool changes, counter requests, runtime/mailbox.hpp); the
// burst is parsed and hashed packet by packet, unless its source parsed it (packets that do not parse
// are counted and go no further), goes through the function's stages (process_burst, network_function.hpp) and leaves as
// verdicts in the output; then, once every kExpireEvery packets, the function ages out what went idle.
//
// Expiry depends on packets, not bursts, so that the output of a trace does not depend on the burst
// size it is cut into: the loop asks the source for no more packets than are left to the next multiple
// of kExpireEvery (when the burst size divides it), so a burst a source cut short (a scheduled change,
// runtime/scheduled_source.hpp; a quiet port) puts the next expiry back on its packet.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/stage_clock.hpp"
#include "flowtrack/runtime/worker_counters.hpp"

namespace flowtrack {

inline constexpr std::size_t kExpireEvery = 32;

// Where a worker's packets go: out.verdict(packet, verdict) for each, out.held(frame, wire_length) for
// each held packet a function releases (network_function.hpp). The loop marks the stages itself.
template <class Out>
concept PacketOutput = requires(Out& out, const NfPacket& packet, Verdict verdict, std::span<const std::uint8_t> frame,
                                std::uint32_t wire_length) {
  out.verdict(packet, verdict);
  out.held(frame, wire_length);
};

// The function's view of the output: its marks go to the stage clock.
template <PacketOutput Out>
struct StageMarkingOutput {
  Out& out;
  StageClock& clock;
  void verdict(const NfPacket& packet, Verdict verdict) { out.verdict(packet, verdict); }
  void held(std::span<const std::uint8_t> frame, std::uint32_t wire_length) { out.held(frame, wire_length); }
  void stage_done(NfStage stage) { clock.stage_done(stage); }
};

// A source that parses what it hands over, as live ports do to find each frame's owner
// (runtime/dpdk_ports.hpp): its packets come with `parsed` and `hash` set, every one of them parsed
// (it counts and drops those that do not parse itself), and the loop takes them as they are.
template <class Source>
concept ParsingSource = requires { requires Source::kParsesPackets; };

// Parses the burst's frames and hashes their flows; those that do not parse are counted and left out,
// the rest closed up in order. Returns how many are left.
inline std::size_t parse_burst(std::span<NfPacket> burst, LinkType link, WorkerCounters& counters) {
  std::size_t parsed = 0;
  for (std::size_t i = 0; i < burst.size(); ++i) {
    const ParseStatus status = parse_frame(burst[i].frame, link, burst[i].parsed);
    if (status != ParseStatus::ok) {
      ++counters.parse_drops[static_cast<std::size_t>(status)];
      continue;
    }
    burst[i].hash = packet_hash(burst[i].parsed);
    if (parsed != i) burst[parsed] = burst[i];  // close the gap an unparsable packet left
    ++parsed;
  }
  return parsed;
}

// Source: next(std::span<NfPacket>) fills frame, capacity, wire_length, time and slot of up to that many
// packets (and parsed and hash: a ParsingSource) and returns how many (0: none now, or none ever), and
// link_type(). between() runs after a burst is taken and before it is processed. Returns when the
// source gives 0.
template <NetworkFunction Nf, class Source, PacketOutput Out, class Between>
void run_burst_loop(Nf& nf, Source& source, Out& packets_out, std::size_t burst_size, WorkerCounters& counters,
                    StageClock& clock, Between&& between) {
  StageMarkingOutput<Out> out{packets_out, clock};
  std::array<NfPacket, kMaxBurst> burst;
  [[maybe_unused]] const LinkType link = source.link_type();  // a ParsingSource's packets come parsed
  const bool aligned = kExpireEvery % burst_size == 0;
  clock.start();
  for (;;) {
    const std::size_t ask = aligned ? std::min(burst_size, kExpireEvery - counters.packets % kExpireEvery) : burst_size;
    const std::size_t n = source.next(std::span(burst).first(ask));
    if (n == 0) return;
    between();
    const Nanos last_time = burst[n - 1].time;
    std::size_t parsed = n;
    if constexpr (!ParsingSource<Source>) parsed = parse_burst(std::span(burst).first(n), link, counters);
    clock.stage_done(NfStage::parse);
    if (parsed != 0) nf.process_burst(std::span(burst).first(parsed), out);
    const std::uint64_t before = counters.packets;
    counters.packets += n;
    ++counters.bursts;
    if (counters.packets / kExpireEvery != before / kExpireEvery) nf.expire(last_time, kDefaultExpireBudget);
    clock.stage_done(NfStage::aging);
  }
}

// The loop alone, with nothing between bursts (tests, a single-threaded replay).
template <NetworkFunction Nf, class Source, PacketOutput Out>
void run_burst_loop(Nf& nf, Source& source, Out& out, std::size_t burst_size, WorkerCounters& counters, StageClock& clock) {
  run_burst_loop(nf, source, out, burst_size, counters, clock, [] {});
}

}  // namespace flowtrack
