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
// With spinlock scaling one instance serves every worker in whatever interleaving the run takes; the
// rehearsal shows it the trace in capture order, which the run follows closely but not exactly.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/nf_runner.hpp"
#include "flowtrack/runtime/rss_steering.hpp"

namespace flowtrack::cli {

enum class Presented : std::uint8_t { as_captured, rewritten, unpresentable };

struct RehearsedTrace {
  PacketStore trace;           // the captured trace with every answer as it reached the function
  PacketPartition partition;   // without the unpresentable packets
  std::uint64_t unpresentable = 0;
};

namespace detail {

// Shows `nf` the packets trace[i], i in `indices`, with the burst loop's expiry cadence; marks the ones
// `present` cannot present. A `present` that wants to see what became of a packet has
// processed(packet, nf), called after nf took it (the frame as nf left it).
template <class Nf, class Present>
void rehearse_queue(Nf& nf, PacketStore& trace, std::span<const std::uint32_t> indices, Present& present,
                    std::vector<bool>& unpresentable) {
  std::array<std::uint8_t, 65536> scratch;
  std::uint64_t seen = 0;
  for (const std::uint32_t i : indices) {
    const std::span<std::uint8_t> bytes = trace.mutable_bytes(i);
    std::memcpy(scratch.data(), bytes.data(), bytes.size());
    NfPacket packet{.frame = {scratch.data(), bytes.size()}, .wire_length = trace[i].wire_length, .capacity = scratch.size()};
    const Nanos now = trace[i].timestamp_ns;
    if (parse_frame(packet.frame, trace.link_type(), packet.parsed) == ParseStatus::ok) {
      switch (present(packet, nf)) {
        case Presented::rewritten: std::memcpy(bytes.data(), scratch.data(), bytes.size()); [[fallthrough]];
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

// make_nf as run_workers takes it; present(NfPacket& packet, const Nf& nf) -> Presented rewrites the
// packet's frame (same length) and parses it again when it presents it otherwise.
template <class MakeNf, class Present>
RehearsedTrace rehearse(const PacketStore& trace, const PacketPartition& partition, NfScaling scaling, MakeNf&& make_nf,
                        Present&& present) {
  RehearsedTrace r{trace, partition, 0};
  std::vector<bool> unpresentable(trace.size(), false);
  const auto workers = static_cast<unsigned>(partition.packets.size());
  if (scaling == NfScaling::spinlock) {
    std::vector<std::uint32_t> all(trace.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    auto nf = make_nf(0u, 1u, trace.empty() ? Nanos{0} : trace[0].timestamp_ns);
    detail::rehearse_queue(*nf, r.trace, all, present, unpresentable);
  } else {
    for (unsigned w = 0; w < workers; ++w) {
      const auto& queue = partition.packets[w];
      auto nf = make_nf(w, workers, queue.empty() ? Nanos{0} : trace[queue.front()].timestamp_ns);
      detail::rehearse_queue(*nf, r.trace, queue, present, unpresentable);
    }
  }
  for (auto& queue : r.partition.packets) {
    std::erase_if(queue, [&](std::uint32_t i) { return unpresentable[i]; });
  }
  r.unpresentable = static_cast<std::uint64_t>(std::count(unpresentable.begin(), unpresentable.end(), true));
  return r;
}

// The rehearsal, then the timed run (run_workers) of the rehearsed trace.
template <class MakeNf, class Present, class Collect>
std::pair<std::vector<WorkerResult>, std::uint64_t> run_rehearsed(const PacketStore& trace, const PacketPartition& partition,
                                                                  unsigned workers, NfScaling scaling,
                                                                  const NfRunOptions& options, MakeNf&& make_nf,
                                                                  Present&& present, Collect&& collect) {
  const RehearsedTrace r = rehearse(trace, partition, scaling, make_nf, present);
  return {run_workers(r.trace, r.partition, workers, scaling, options, make_nf, collect), r.unpresentable};
}

}  // namespace flowtrack::cli
