// Running a network function over a trace on N workers: what `flowtrack run` and `flowtrack bench nf`
// share. Packets reach workers by RSS with the symmetric key, so each connection stays on one worker,
// in trace order. Each worker pins itself, copies its queue (first touch near its core), waits for the
// others, then runs its queue through the function with the trace's timestamps as the clock, expiring
// once per burst of 32. Cycles are TSC time of the processing loop (parse, function, copy out).
//
// Two ways to give the workers the function (NfScaling):
//  - sharded: one instance per worker, nothing shared (seed 000's per-core duplication; a NAT instance
//    owns its slice of the port range);
//  - spinlock: one instance for all workers, every call into it under one Spinlock (seed 000's global
//    lock, seed 003's global spinlock NAT). Workers replay their queues concurrently, each at its own
//    pace through trace time; the instance is shown a clock that never goes back (the latest time any
//    worker has reached), as its aging requires.
#pragma once

#include <algorithm>
#include <array>
#include <barrier>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/runtime/cpu.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/util/spinlock.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

// What one worker did.
struct WorkerResult {
  PacketStore out{LinkType::ethernet};
  std::uint64_t packets = 0, forwarded = 0, replied = 0, cycles = 0;
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};
  NfCounters counters;
  std::size_t live_connections = 0;
  std::map<std::string, std::uint64_t> backends;  // name -> connections (lb) or packets (slb)
};

template <NetworkFunction Nf>
void run_worker(Nf& nf, const PacketStore& queue, WorkerResult& result) {
  std::array<std::uint8_t, 65536> scratch;
  result.out = PacketStore(queue.link_type());
  result.out.reserve(queue.size(), queue.arena_bytes());
  // Touch the output's pages before the clock starts: page faults are the kernel's time, not the
  // function's (they would otherwise dominate short runs).
  for (std::size_t i = 0; i < queue.size(); ++i) result.out.append(queue[i]);
  result.out.clear();
  const std::uint64_t start = tsc_begin();
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const PacketView packet = queue[i];
    const std::span<std::uint8_t> frame(scratch.data(), packet.bytes.size());
    std::copy(packet.bytes.begin(), packet.bytes.end(), frame.begin());
    NfPacket p{frame, {}, packet.wire_length, scratch.size()};
    ++result.packets;
    const ParseStatus status = parse_frame(frame, queue.link_type(), p.parsed);
    if (status != ParseStatus::ok) {
      ++result.parse_drops[static_cast<std::size_t>(status)];
    } else if (const Verdict verdict = nf.process(p, packet.timestamp_ns); verdict == Verdict::forward || verdict == Verdict::reply) {
      // A reply goes back where the packet came from; in a replayed trace it joins the one output.
      result.out.append(p.frame, packet.timestamp_ns, p.wire_length);
      ++(verdict == Verdict::forward ? result.forwarded : result.replied);
    }
    if constexpr (HoldsPackets<Nf>) {
      nf.release([&](std::span<const std::uint8_t> held, std::uint32_t wire_length) {
        result.out.append(held, packet.timestamp_ns, wire_length);
        ++result.forwarded;
      });
    }
    if (i % 32 == 31) nf.expire(packet.timestamp_ns);
  }
  result.cycles = tsc_end() - start;
  result.counters = nf.counters();
}

enum class NfScaling : std::uint8_t { sharded, spinlock };

// The spinlock scaling's view of the one shared instance, one per worker.
template <NetworkFunction Nf>
class LockedNf {
 public:
  struct Shared {
    std::unique_ptr<Nf> nf;
    alignas(64) Spinlock lock;
    Nanos clock = 0;  // the latest time shown to nf; guarded by lock
  };

  explicit LockedNf(Shared& shared) : shared_(shared) {}

  Verdict process(NfPacket& packet, Nanos now) {
    std::lock_guard guard(shared_.lock);
    return shared_.nf->process(packet, advance(now));
  }
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) {
    std::lock_guard guard(shared_.lock);
    return shared_.nf->expire(advance(now), budget);
  }
  template <class Emit>
    requires HoldsPackets<Nf>
  void release(Emit&& emit) {
    std::lock_guard guard(shared_.lock);
    shared_.nf->release(emit);
  }
  // The instance's counters belong to no one worker: the runner reports them once, after the run.
  NfCounters counters() const { return {}; }

 private:
  Nanos advance(Nanos now) { return shared_.clock = std::max(shared_.clock, now); }

  Shared& shared_;
};

// make_nf(instance, instances, start) builds instance `instance` of `instances` whose clock starts at
// `start`; collect(nf, result) adds what the instance knows (live connections, backends) to a result.
// With spinlock scaling there is one instance; its counters and collect() go to worker 0's result.
template <class MakeNf, class Collect>
std::vector<WorkerResult> run_workers(const PacketStore& trace, const PacketPartition& partition, unsigned workers,
                                      NfScaling scaling, MakeNf&& make_nf, Collect&& collect) {
  using Nf = typename std::invoke_result_t<MakeNf&, unsigned, unsigned, Nanos>::element_type;
  std::vector<WorkerResult> results(workers);
  typename LockedNf<Nf>::Shared shared;
  if (scaling == NfScaling::spinlock) {
    Nanos start = ~Nanos{0};
    for (const auto& queue : partition.packets) {
      if (!queue.empty()) start = std::min(start, trace[queue.front()].timestamp_ns);
    }
    shared.clock = start == ~Nanos{0} ? 0 : start;
    shared.nf = make_nf(0u, 1u, shared.clock);
  }
  std::barrier ready(static_cast<std::ptrdiff_t>(workers));
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      pin_current_thread(w);
      PacketStore queue(trace.link_type());
      for (const std::uint32_t i : partition.packets[w]) queue.append(trace[i]);
      if (scaling == NfScaling::spinlock) {
        LockedNf<Nf> view(shared);
        ready.arrive_and_wait();
        run_worker(view, queue, results[w]);
      } else {
        auto nf = make_nf(w, workers, queue.empty() ? Nanos{0} : queue[0].timestamp_ns);
        ready.arrive_and_wait();
        run_worker(*nf, queue, results[w]);
        collect(*nf, results[w]);
      }
    });
  }
  for (auto& t : threads) t.join();
  if (scaling == NfScaling::spinlock) {
    results[0].counters = shared.nf->counters();
    collect(*shared.nf, results[0]);
  }
  return results;
}

inline PacketStore merge_in_time_order(std::vector<WorkerResult>& results, LinkType link) {
  std::vector<std::pair<std::uint64_t, std::pair<std::size_t, std::size_t>>> order;  // (time, (worker, index))
  std::size_t bytes = 0;
  for (std::size_t w = 0; w < results.size(); ++w) {
    for (std::size_t i = 0; i < results[w].out.size(); ++i) order.push_back({results[w].out[i].timestamp_ns, {w, i}});
    bytes += results[w].out.arena_bytes();
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  PacketStore merged(link);
  merged.reserve(order.size(), bytes);
  for (const auto& [time, where] : order) merged.append(results[where.first].out[where.second]);
  return merged;
}

// Packets per second over the slowest worker's time (all workers run at once).
inline double aggregate_mpps(const std::vector<WorkerResult>& results) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerResult& r : results) {
    packets += r.packets;
    cycles = std::max(cycles, r.cycles);
  }
  return cycles > 0 ? static_cast<double>(packets) * tsc_hz() / static_cast<double>(cycles) / 1e6 : 0;
}

// Worker cycles per packet, all workers together.
inline double cycles_per_packet(const std::vector<WorkerResult>& results) {
  std::uint64_t packets = 0, cycles = 0;
  for (const WorkerResult& r : results) {
    packets += r.packets;
    cycles += r.cycles;
  }
  return packets > 0 ? static_cast<double>(cycles) / static_cast<double>(packets) : 0;
}

}  // namespace flowtrack
