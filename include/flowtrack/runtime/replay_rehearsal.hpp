// Replaying a trace captured on one side of a function. The campus trace is captured where the
// clients are: for the LB, clients talk to the VIPs and the VIPs answer; for the NAT, inside hosts talk
// to remote servers with their own addresses both ways. Packets towards the function went through it as
// they are, but an answer in such a trace shows what the function delivered, not what reached it: the
// LB got it from the connection's backend, the NAT at the external endpoint of the session. What reached
// the function depends on its own decisions (the backend it chose, the port it allocated).
//
// So the trace is rehearsed first, untimed: a function instance, built as the timed run builds it, is
// shown the trace one packet at a time, and `present(packet, nf)` turns each captured answer into what
// reached the function, which is written back into a copy of the trace. The timed run then replays that
// copy through a fresh instance, which takes the same decisions (it is deterministic given its packets)
// and sees the same packets: the run pays for the function only, not for the replay. An answer that no
// state explains (its connection was never opened through the function, or ended) cannot be presented;
// it is left out of the timed run and counted.
//
// The rehearsal applies the run's schedule of pool changes as the run will (each instance's times
// counting from the first packet it sees). With one instance shared under a lock, it serves every
// worker in whatever interleaving the run takes; the rehearsal shows it the trace in capture order, which
// the run follows closely but not exactly.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/replay_run.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/runtime/sharing.hpp"

namespace flowtrack {

enum class Presented : std::uint8_t { as_captured, rewritten, unpresentable };

struct RehearsedTrace {
  PacketStore trace;           // the captured trace with every answer as it reached the function
  PacketPartition partition;   // without the unpresentable packets
  std::uint64_t unpresentable = 0;
};

namespace detail {

// Shows `nf` the packets trace[i], i in `indices`, with the burst loop's expiry cadence and the
// schedule's changes as their times come; marks the ones `present` cannot present. A `present` that
// wants to see what became of a packet has processed(packet, nf), called after nf took it (the frame as
// nf left it).
template <class Nf, class Present>
void rehearse_queue(Nf& nf, PacketStore& trace, std::span<const std::uint32_t> indices, PoolChangeSchedule schedule,
                    Present& present, std::vector<bool>& unpresentable) {
  // A buffer as the timed run's (ReplaySource's): headroom, then the frame, with room for any packet after it.
  std::array<std::uint8_t, ReplaySource::kHeadroom + 65536> scratch;
  std::uint8_t* const frame = scratch.data() + ReplaySource::kHeadroom;
  std::uint64_t seen = 0;
  for (const std::uint32_t i : indices) {
    const std::span<std::uint8_t> bytes = trace.mutable_bytes(i);
    std::memcpy(frame, bytes.data(), bytes.size());
    NfPacket packet{.frame = {frame, bytes.size()},
                    .wire_length = trace[i].wire_length,
                    .capacity = scratch.size() - ReplaySource::kHeadroom,
                    .headroom = ReplaySource::kHeadroom};
    const Nanos now = trace[i].timestamp_ns;
    if constexpr (TakesPoolChanges<Nf>) apply_due_changes(schedule, nf, now);
    if (parse_frame(packet.frame, trace.link_type(), packet.parsed) == ParseStatus::ok) {
      switch (present(packet, nf)) {
        case Presented::rewritten: std::memcpy(bytes.data(), frame, bytes.size()); [[fallthrough]];
        case Presented::as_captured:
          process_packet(nf, packet, now);
          if constexpr (requires { present.processed(std::as_const(packet), std::as_const(nf)); }) present.processed(packet, nf);
          break;
        case Presented::unpresentable: unpresentable[i] = true; break;
      }
    }
    if (++seen % kExpireEvery == 0) nf.expire(now, kDefaultExpireBudget);
  }
}

}  // namespace detail

// make_nf(worker, workers, start) -> std::unique_ptr<Nf>, as the run's sharing takes it; one_instance:
// the run shares one instance (OneUnderLock), else one per worker of the partition. present(NfPacket&
// packet, const Nf& nf) -> Presented rewrites the packet's frame (same length) and parses it again when
// it presents it otherwise.
template <class MakeNf, class Present>
RehearsedTrace rehearse(const PacketStore& trace, const PacketPartition& partition, bool one_instance,
                        const PoolChangeSchedule& schedule, MakeNf&& make_nf, Present&& present) {
  RehearsedTrace r{trace, partition, 0};
  std::vector<bool> unpresentable(trace.size(), false);
  const auto workers = static_cast<unsigned>(partition.packets.size());
  if (one_instance) {
    std::vector<std::uint32_t> all(trace.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    auto nf = make_nf(0u, 1u, trace.empty() ? Nanos{0} : trace[0].timestamp_ns);
    detail::rehearse_queue(*nf, r.trace, all, schedule, present, unpresentable);
  } else {
    for (unsigned w = 0; w < workers; ++w) {
      const auto& queue = partition.packets[w];
      auto nf = make_nf(w, workers, queue.empty() ? Nanos{0} : trace[queue.front()].timestamp_ns);
      detail::rehearse_queue(*nf, r.trace, queue, schedule, present, unpresentable);
    }
  }
  for (auto& queue : r.partition.packets) {
    std::erase_if(queue, [&](std::uint32_t i) { return unpresentable[i]; });
  }
  r.unpresentable = static_cast<std::uint64_t>(std::count(unpresentable.begin(), unpresentable.end(), true));
  return r;
}

// What a rehearsed replay gives: each worker's report, and the answers left out.
struct RehearsedReplay {
  std::vector<WorkerReport> workers;
  std::uint64_t unpresentable = 0;
};

// The rehearsal, then the timed replay (replay_run.hpp) of the rehearsed trace, with one instance per
// worker or (one_instance) one shared under a lock.
template <class MakeNf, class Present, class Collect>
RehearsedReplay rehearse_and_replay(const PacketStore& trace, const PacketPartition& partition, bool one_instance,
                                    const ReplayOptions& options, MakeNf&& make_nf, Present&& present, Collect&& collect) {
  const RehearsedTrace r = rehearse(trace, partition, one_instance, options.changes, make_nf, present);
  const auto workers = static_cast<unsigned>(r.partition.packets.size());
  if (one_instance) {
    OneUnderLock functions(make_nf, workers, first_time(r.trace, r.partition));
    return {replay(r.trace, r.partition, functions, options, collect), r.unpresentable};
  }
  OnePerWorker functions(make_nf, workers);
  return {replay(r.trace, r.partition, functions, options, collect), r.unpresentable};
}

}  // namespace flowtrack
