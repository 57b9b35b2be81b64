// `flowtrack bench aging`: the four aging methods under the same steady churn, sweeping how often
// expiry runs ([conntrack-study], Fig. 5 analogue). One core, one Cuckoo++ table for every method (stamps on
// only for lazy), so the methods differ only in how they age.
//
// Traffic: a fixed population of live flows; each packet belongs to a random live flow, and with
// probability --new-share a random live flow ends first (it falls silent) and a new one takes its
// place. Time is virtual: packet i arrives at i / rate, so the aging work per second of traffic is the
// same on any machine, and only the cycles are measured. Expiry runs at frequency f (every 1/f virtual
// seconds): the wheel ticks at 1/f, the heap pops what is due, the scan and the lazy sweep cover the
// table once per timeout (positions per call = positions / (f * timeout)). Lookups run in bursts of
// 32 with find_bulk, as the runtime does; misses are inserted and armed, hits touched.
//
// Reported per method and frequency, over the steady part (after the first quarter of the packets):
// cycles per packet in total and by stage (lookup, insert + touch, expiry), table occupancy (mean, max
// and a series over time), and after traffic stops and two timeouts pass, the entries left in the table
// (wheel, heap and scan must leave none; lazy leaves expired entries that any insert may take over).
#include <fmt/core.h>
#include <x86intrin.h>


#include "bench_aging.hpp"
#include "json_line.hpp"
#include "run_context.hpp"
#include "user_error.hpp"
#include "flowtrack/aging/heap_aging.hpp"
#include "flowtrack/aging/lazy_aging.hpp"
#include "flowtrack/aging/scan_aging.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"
#include "flowtrack/util/random.hpp"
#include "flowtrack/util/statistics.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack::cli {
namespace {

constexpr std::size_t kUnlimited = ~std::size_t{0};
constexpr unsigned kStampShift = 20;  // Cuckoo++ stamp unit ~1.05 ms: timeouts up to ~17 s

using Table = CuckooPPTable<FlowKeyV4>;

struct Stream {
  std::vector<FlowKeyV4> keys;  // by flow number
  std::vector<std::uint32_t> hashes;
  std::vector<std::uint32_t> flow_of_packet;
};

Stream make_stream(const AgingBenchOptions& o) {
  Random rng(7);
  const auto live = static_cast<std::size_t>(static_cast<double>(o.capacity) * o.live_share);
  std::vector<std::uint32_t> population(live);
  for (std::size_t i = 0; i < live; ++i) population[i] = static_cast<std::uint32_t>(i);
  Stream s;
  s.flow_of_packet.resize(o.packets);
  std::uint32_t next = static_cast<std::uint32_t>(live);
  for (std::uint64_t p = 0; p < o.packets; ++p) {
    if (rng.unit() < o.new_share) population[rng.below(live)] = next++;
    s.flow_of_packet[p] = population[rng.below(live)];
  }
  s.keys.resize(next);
  s.hashes.resize(next);
  for (std::uint32_t f = 0; f < next; ++f) {
    const std::uint64_t x = (f + 1) * 0x9E3779B97F4A7C15ull;
    s.keys[f] = FlowKeyV4::from_host(0x0a000000u | static_cast<std::uint32_t>(x & 0xffffff), 0xc6120001u + (f & 3),
                                     static_cast<std::uint16_t>(x >> 24), 443, ipproto::kTcp);
    s.hashes[f] = flow_hash(s.keys[f]);
  }
  return s;
}

struct Result {
  double cycles = 0, lookup = 0, insert = 0, expiry = 0;  // per steady-state packet
  double occupancy_mean = 0, occupancy_max = 0;
  std::vector<double> occupancy_series;
  std::size_t left_after_drain = 0;
  std::uint64_t expired = 0, recycled = 0;
};

template <class Policy>
Result run_method(Table& table, Policy& policy, const Stream& s, const AgingBenchOptions& o, double frequency, bool lazy) {
  const double ns_per_packet = 1e3 / o.rate_mpps;
  const auto period = static_cast<Nanos>(1e9 / frequency);
  const auto timeout = static_cast<Nanos>(o.timeout_ms * 1e6);
  std::vector<std::uint32_t> flow_of_id(table.capacity());
  Result r;
  std::uint64_t stage[3] = {0, 0, 0};
  const std::uint64_t steady_from = o.packets / 4 / kDefaultBurst * kDefaultBurst;
  const std::uint64_t sample_every = std::max<std::uint64_t>(o.packets / 64 / kDefaultBurst * kDefaultBurst, kDefaultBurst);
  std::size_t steady_samples = 0;
  Nanos next_expiry = period;
  auto on_expire = [&](FlowId id) {
    ++r.expired;
    if constexpr (!Policy::kRemovesFromTable) {
      const std::uint32_t f = flow_of_id[id];
      table.erase(s.keys[f], s.hashes[f]);
    }
  };

  std::array<FlowKeyV4, kDefaultBurst> keys;
  std::array<std::uint32_t, kDefaultBurst> hashes;
  std::array<FlowId, kDefaultBurst> ids;
  std::uint64_t start = 0;
  for (std::uint64_t p = 0; p + kDefaultBurst <= o.packets; p += kDefaultBurst) {
    if (p == steady_from) {
      stage[0] = stage[1] = stage[2] = 0;
      start = __rdtsc();
    }
    const auto now = static_cast<Nanos>(static_cast<double>(p) * ns_per_packet);
    for (std::size_t i = 0; i < kDefaultBurst; ++i) {
      keys[i] = s.keys[s.flow_of_packet[p + i]];
      hashes[i] = s.hashes[s.flow_of_packet[p + i]];
    }
    std::uint64_t t = __rdtsc();
    if (lazy) table.set_clock(now);  // the table's coarse clock, once per burst like the runtime's
    const std::uint64_t hits = table.find_bulk(keys, hashes, ids);
    std::uint64_t t2 = __rdtsc();
    stage[0] += t2 - t;
    t = t2;
    for (std::size_t i = 0; i < kDefaultBurst; ++i) {
      if ((hits >> i) & 1) {
        policy.touch(ids[i], now);
        continue;
      }
      const InsertResult ins = table.insert(keys[i], hashes[i]);
      if (!ins.ok()) continue;  // full: the occupancy column shows why
      if (ins.status == InsertStatus::recycled) {
        ++r.recycled;
        ++r.expired;
      }
      if (ins.is_new()) {
        flow_of_id[ins.id] = s.flow_of_packet[p + i];
        policy.arm(ins.id, now, timeout);
      } else {
        policy.touch(ins.id, now);  // a duplicate inside this burst
      }
    }
    t2 = __rdtsc();
    stage[1] += t2 - t;
    t = t2;
    while (next_expiry <= now) {
      policy.advance(next_expiry, kUnlimited, on_expire);
      next_expiry += period;
    }
    stage[2] += __rdtsc() - t;
    if (p % sample_every == 0) {
      const double occupancy = static_cast<double>(table.size()) / static_cast<double>(table.capacity());
      r.occupancy_series.push_back(occupancy);
      if (p >= steady_from) {
        r.occupancy_mean += occupancy;
        ++steady_samples;
        r.occupancy_max = std::max(r.occupancy_max, occupancy);
      }
    }
  }
  const std::uint64_t total = __rdtsc() - start;
  const auto steady_packets = static_cast<double>(o.packets - steady_from);
  r.cycles = static_cast<double>(total) / steady_packets;
  r.lookup = static_cast<double>(stage[0]) / steady_packets;
  r.insert = static_cast<double>(stage[1]) / steady_packets;
  r.expiry = static_cast<double>(stage[2]) / steady_packets;
  r.occupancy_mean /= static_cast<double>(std::max<std::size_t>(steady_samples, 1));

  // Traffic stops: expiry keeps running for two timeouts and two periods: the last flows fall due one
  // timeout after the last packet, and the scan and lazy sweeps need up to one more timeout (one sweep)
  // to reach them.
  const auto end = static_cast<Nanos>(static_cast<double>(o.packets) * ns_per_packet) + 2 * timeout + 2 * period;
  for (; next_expiry <= end; next_expiry += period) policy.advance(next_expiry, kUnlimited, on_expire);
  if (lazy) {
    // Whatever lazy leaves is expired and invisible: count what is still visible.
    table.set_clock(end);
    std::size_t visible = 0;
    for (std::uint32_t f = 0; f < s.keys.size(); ++f) visible += table.find(s.keys[f], s.hashes[f]) != kNoFlow;
    r.left_after_drain = visible;
  } else {
    r.left_after_drain = table.size();
  }
  return r;
}

Result run_once(const std::string& method, const Stream& s, const AgingBenchOptions& o, double frequency) {
  auto table = std::make_unique<Table>(o.capacity, kStampShift);
  const double timeout_s = o.timeout_ms / 1e3;
  // Calls per timeout at this frequency: the scan and the lazy sweep cover the table once per timeout.
  const double calls_per_timeout = std::max(1.0, frequency * timeout_s);
  auto share = [&](std::size_t positions) {
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(static_cast<double>(positions) / calls_per_timeout)));
  };
  if (method == "wheel") {
    TimerWheel wheel(table->capacity(), {.tick = static_cast<Nanos>(1e9 / frequency), .levels = 4, .start = 0});
    return run_method(*table, wheel, s, o, frequency, false);
  }
  if (method == "heap") {
    HeapAging heap(table->capacity());
    return run_method(*table, heap, s, o, frequency, false);
  }
  if (method == "scan") {
    ScanAging<Table> scan(*table, share(table->scan_positions()));
    return run_method(*table, scan, s, o, frequency, false);
  }
  LazyAging<Table> lazy(*table, share(table->bucket_count()), 0);
  return run_method(*table, lazy, s, o, frequency, true);
}

}  // namespace

void run_aging_bench(AgingBenchOptions o) {
  if (o.quick) {
    o.capacity = 1 << 18;
    o.packets = 2'000'000;
    o.frequencies = {10, 100, 1000};
    o.reps = std::min(o.reps, 3u);
  }
  for (const auto& m : o.methods) {
    if (m != "wheel" && m != "lazy" && m != "scan" && m != "heap") throw UserError(fmt::format("bench aging: unknown method '{}'", m));
  }
  if (o.reps == 0) throw UserError("bench aging: --reps must be at least 1");
  if (!(o.live_share > 0 && o.live_share < 1)) throw UserError("bench aging: --live-share must be in (0, 1)");
  if (!(o.new_share >= 0 && o.new_share <= 1)) throw UserError("bench aging: --new-share must be in [0, 1]");
  if (o.timeout_ms <= 0 || o.timeout_ms * 1e6 > static_cast<double>(std::uint64_t{1} << (kStampShift + 14))) {
    throw UserError("bench aging: --timeout-ms must be in (0, 17000]");
  }
  for (double f : o.frequencies) {
    if (f <= 0 || f > 1e6) throw UserError("bench aging: frequencies must be in (0, 1e6] Hz");
  }
  const Stream stream = make_stream(o);
  if (o.json) {
    print_run_context(false);
  } else {
    fmt::print("flowtrack bench aging: Cuckoo++ table of {} flows, {:.0f} live, {:.1f} % of packets start a flow, "
               "{} Mpps virtual, timeout {} ms, {} packets, TSC {:.2f} GHz, median of {} reps\n\n",
               o.capacity, static_cast<double>(o.capacity) * o.live_share, o.new_share * 100, o.rate_mpps, o.timeout_ms,
               o.packets, tsc_hz() / 1e9, o.reps);
    fmt::print("{:<6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}\n", "method", "freq Hz", "cyc/pkt", "lookup",
               "ins+tch", "expiry", "occ mean", "occ max", "left");
  }
  for (double f : o.frequencies) {
    for (const auto& method : o.methods) {
      std::vector<double> cycles, lookup, insert, expiry;
      Result last;
      for (unsigned rep = 0; rep < o.reps; ++rep) {
        last = run_once(method, stream, o, f);
        cycles.push_back(last.cycles);
        lookup.push_back(last.lookup);
        insert.push_back(last.insert);
        expiry.push_back(last.expiry);
      }
      if (o.json) {
        JsonObject()
            .set("method", method)
            .set("frequency_hz", f)
            .set("cycles_per_packet", median(cycles))
            .set("expiry_cycles_per_packet", median(expiry))
            .set("lookup_cycles_per_packet", median(lookup))
            .set("insert_cycles_per_packet", median(insert))
            .set("occupancy", last.occupancy_mean)
            .set("occupancy_max", last.occupancy_max)
            .set("occupancy_series", last.occupancy_series)
            .set("left_after_drain", last.left_after_drain)
            .set("expired", last.expired)
            .set("recycled", last.recycled)
            .set("reps", o.reps)
            .set("timeout_ms", o.timeout_ms)
            .set("capacity", o.capacity)
            .print_line();
      } else {
        fmt::print("{:<6} {:>8.0f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.3f} {:>8.3f} {:>10}\n", method, f,
                   median(cycles), median(lookup), median(insert), median(expiry), last.occupancy_mean,
                   last.occupancy_max, last.left_after_drain);
      }
      std::fflush(stdout);
    }
  }
}

}  // namespace flowtrack::cli
