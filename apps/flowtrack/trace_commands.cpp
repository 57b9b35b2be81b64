// `flowtrack trace gen` and `flowtrack trace stats`.
#include "trace_commands.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "json_line.hpp"
#include "user_error.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/io/trace_stats.hpp"
#include "flowtrack/util/available_memory.hpp"

namespace flowtrack::cli {
namespace {

// The numbers of a meaningful trace. Times are whole nanoseconds in 64 bits and a classic pcap's
// seconds are 32 bits, so a trace lasts at most kMaxSeconds (about three years); its packets are at
// least a nanosecond apart on average.
constexpr double kMinSeconds = 1e-3, kMaxSeconds = 1e8;
constexpr double kMinPps = 1e-3, kMaxPps = 1e9;
constexpr double kMinZipfExponent = 0.01, kMaxZipfExponent = 10;

bool within(double value, double low, double high) { return value >= low && value <= high; }  // false for NaN

// Stored bytes of a generated packet: its record and its frame (a campus frame cut at the snaplen,
// and its scheduled event while the trace is built).
constexpr std::uint64_t kUniformPacketBytes = sizeof(PacketStore::Record) + 64;
constexpr std::uint64_t kCampusPacketsPerFlow = 16;  // handshake, close and the mean of the data packets, rounded up

void check_ranges(const TraceGenOptions& o) {
  if (o.duration_s != 0 && !within(o.duration_s, kMinSeconds, kMaxSeconds)) {
    throw UserError(fmt::format("trace gen: --duration {} s: must be in {}..{} seconds", o.duration_s, kMinSeconds, kMaxSeconds));
  }
  if (!within(o.pps, kMinPps, kMaxPps)) {
    throw UserError(fmt::format("trace gen: --pps {}: must be in {}..{} packets per second", o.pps, kMinPps, kMaxPps));
  }
  if (!within(o.zipf_exponent, kMinZipfExponent, kMaxZipfExponent)) {
    throw UserError(fmt::format("trace gen: --zipf-exponent {}: must be in {}..{}", o.zipf_exponent, kMinZipfExponent, kMaxZipfExponent));
  }
  if (o.profile == "campus") return;
  const std::uint64_t packets = o.packets != 0 ? o.packets : std::uint64_t{o.flows} * 10;
  const double rate = o.duration_s > 0 ? static_cast<double>(packets) / o.duration_s : o.pps;
  const double seconds = static_cast<double>(packets) / rate;
  if (rate > kMaxPps || seconds > kMaxSeconds) {
    throw UserError(fmt::format("trace gen: {} packets at {} per second: the rate must be at most {} per second and the trace at "
                                "most {} seconds long",
                                packets, rate, kMaxPps, kMaxSeconds));
  }
}

// The trace held in memory before it is written, against what the machine has.
void check_memory(const TraceGenOptions& o) {
  const std::uint64_t stored = o.snaplen == 0 ? 1600 : std::min<std::uint64_t>(o.snaplen, 1600);
  const long double per_window =
      o.profile == "campus"
          ? static_cast<long double>(o.flows) * kCampusPacketsPerFlow * (sizeof(PacketStore::Record) + stored + 16)
          : static_cast<long double>(o.packets != 0 ? o.packets : std::uint64_t{o.flows} * 10) * kUniformPacketBytes;
  const long double need = per_window * o.windows;
  const std::uint64_t available = available_memory_bytes();
  if (need > static_cast<long double>(available)) {
    throw UserError(fmt::format("trace gen: {} flows x {} windows would take about {} in memory; this machine has {} available",
                                o.flows, o.windows, memory_size_text(static_cast<std::uint64_t>(std::min<long double>(need, 1e19L))),
                                memory_size_text(available)));
  }
}

PacketStore generate(const TraceGenOptions& o) {
  if (o.profile == "campus") {
    CampusProfile profile;
    profile.flows = o.flows;
    profile.seed = o.seed;
    profile.snaplen = o.snaplen;
    if (o.duration_s > 0) profile.new_flows_per_second = o.flows / o.duration_s;
    return generate_campus(profile);
  }
  UniformProfile base;
  base.flows = o.flows;
  base.seed = o.seed;
  base.packets = o.packets != 0 ? o.packets : std::uint64_t{o.flows} * 10;
  base.packets_per_second = o.duration_s > 0 ? static_cast<double>(base.packets) / o.duration_s : o.pps;
  if (o.profile == "uniform") return generate_uniform(base);
  return generate_zipf({base, o.zipf_exponent});
}

}  // namespace

void run_trace_gen(const TraceGenOptions& o) {
  check_ranges(o);
  check_memory(o);
  PacketStore trace = generate(o);
  if (o.windows > 1) trace = multiply_trace(trace, {.windows = o.windows});
  trace.save_pcap(o.output, o.format == "pcapng" ? CaptureFormat::pcapng : CaptureFormat::pcap);
  fmt::print("wrote {} packets ({} profile, {} flows x {} windows, {:.3f} s) to {}\n", trace.size(), o.profile,
             o.flows, o.windows, static_cast<double>(trace.duration_ns()) / 1e9, o.output);
}

namespace {

JsonObject to_json(const TraceStats& s) {
  std::vector<JsonObject> concurrency;
  for (const auto& sample : s.concurrency) concurrency.push_back(JsonObject().set("time_s", sample.time_s).set("flows", sample.flows));
  std::vector<JsonObject> top_flows;
  for (const auto& flow : s.top_flows) {
    top_flows.push_back(JsonObject().set("flow", flow.key).set("packets", flow.packets).set("bytes", flow.bytes));
  }
  JsonObject j;
  j.set("packets", s.packets)
      .set("bytes", s.bytes)
      .set("flows", s.flows)
      .set("max_concurrent_flows", s.max_concurrent_flows)
      .set("duration_s", s.duration_s)
      .set("ipv4_packets", s.ipv4_packets)
      .set("ipv6_packets", s.ipv6_packets)
      .set("non_first_fragments", s.non_first_fragments)
      .set("packets_by_protocol", s.packets_by_protocol)
      .set("flows_by_protocol", s.flows_by_protocol)
      .set("parse_failures", s.parse_failures)
      .set("concurrency", concurrency)
      .set("top_flows", top_flows);
  return j;
}

void print_text(const std::string& path, const TraceStats& s) {
  fmt::print("trace {}\n", path);
  fmt::print("  packets              {:>14}\n", s.packets);
  fmt::print("  bytes (wire)         {:>14}\n", s.bytes);
  fmt::print("  duration             {:>14.3f} s\n", s.duration_s);
  fmt::print("  flows (connections)  {:>14}\n", s.flows);
  fmt::print("  max concurrent flows {:>14}\n", s.max_concurrent_flows);
  if (s.duration_s > 0) {
    fmt::print("  mean rate            {:>14.3f} Mpps, {:.3f} Gbps\n", s.packets / s.duration_s / 1e6,
               s.bytes * 8 / s.duration_s / 1e9);
  }
  fmt::print("  protocol mix (packets / flows):\n");
  for (const auto& [protocol, packets] : s.packets_by_protocol) {
    const auto flows = s.flows_by_protocol.contains(protocol) ? s.flows_by_protocol.at(protocol) : 0;
    fmt::print("    {:<8} {:>12} {:>10}\n", protocol, packets, flows);
  }
  if (!s.parse_failures.empty()) {
    fmt::print("  unparsed frames:\n");
    for (const auto& [reason, count] : s.parse_failures) fmt::print("    {:<28} {:>10}\n", reason, count);
  }
  fmt::print("  concurrent flows over time:\n");
  for (const auto& sample : s.concurrency) fmt::print("    t={:>9.3f} s {:>10}\n", sample.time_s, sample.flows);
  fmt::print("  top flows by packets:\n");
  for (const auto& flow : s.top_flows) fmt::print("    {:>8} pkts {:>12} B  {}\n", flow.packets, flow.bytes, flow.key);
}

}  // namespace

void run_trace_stats(const TraceStatsOptions& o) {
  const PacketStore trace = PacketStore::load_pcap(o.path);
  const TraceStats stats = compute_trace_stats(trace, o.top);
  if (o.json) {
    to_json(stats).print_line();
  } else {
    print_text(o.path, stats);
  }
}

}  // namespace flowtrack::cli
