// Running a network function over a trace on N sharded workers: what `flowtrack run` and
// `flowtrack bench nf` share. Packets reach workers by RSS with the symmetric key; each worker pins
// itself, copies its queue (first touch near its core), builds its own instance of the function and runs
// it over the queue in trace order with the trace's timestamps as the clock, expiring once per burst of
// 32. Cycles are TSC time of the processing loop (parse, function, copy out).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/runtime/cpu.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/rss_steering.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack::cli {

// What one worker did.
struct WorkerResult {
  PacketStore out{LinkType::ethernet};
  std::uint64_t packets = 0, forwarded = 0, replied = 0, cycles = 0;
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};
  NfCounters counters;
  std::size_t live_connections = 0;
  std::map<std::string, std::uint64_t> backends;  // name -> connections (lb) or packets (slb)
};

template <class Nf>
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
    if constexpr (requires { nf.release([](std::span<const std::uint8_t>, std::uint32_t) {}); }) {
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

// Every worker: pin, copy its queue (first touch near its core), build its function, run.
template <class MakeNf, class Collect>
std::vector<WorkerResult> run_workers(const PacketStore& trace, const PacketPartition& partition, unsigned workers,
                                      MakeNf&& make_nf, Collect&& collect) {
  std::vector<WorkerResult> results(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      pin_current_thread(w);
      PacketStore queue(trace.link_type());
      for (const std::uint32_t i : partition.packets[w]) queue.append(trace[i]);
      auto nf = make_nf(w, queue.empty() ? Nanos{0} : queue[0].timestamp_ns);
      run_worker(*nf, queue, results[w]);
      collect(*nf, results[w]);
    });
  }
  for (auto& t : threads) t.join();
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

}  // namespace flowtrack::cli
