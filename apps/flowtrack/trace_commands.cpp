// `flowtrack trace gen` and `flowtrack trace stats`.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/io/trace_stats.hpp"

namespace flowtrack::cli {
namespace {

struct GenOptions {
  std::string profile = "campus";
  std::uint32_t flows = 20'000;
  double duration_s = 0;  // 0: derived from the profile's arrival rate / packet rate
  double pps = 10e6;
  std::uint64_t packets = 0;
  std::uint64_t seed = 1;
  double zipf_exponent = 1.0;
  unsigned windows = 1;
  std::uint16_t snaplen = 128;
  std::string format = "pcap";
  std::string output;
};

PacketStore generate(const GenOptions& o) {
  try {
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
  } catch (const std::invalid_argument& e) {
    throw UserError(fmt::format("trace gen: {}", e.what()));
  }
}

void run_gen(const GenOptions& o) {
  PacketStore trace = generate(o);
  if (o.windows > 1) {
    try {
      trace = multiply_trace(trace, {.windows = o.windows});
    } catch (const std::invalid_argument& e) {
      throw UserError(fmt::format("trace gen: {}", e.what()));
    }
  }
  try {
    trace.save_pcap(o.output, o.format == "pcapng" ? CaptureFormat::pcapng : CaptureFormat::pcap);
  } catch (const PcapError& e) {
    throw UserError(e.what());
  }
  fmt::print("wrote {} packets ({} profile, {} flows x {} windows, {:.3f} s) to {}\n", trace.size(), o.profile,
             o.flows, o.windows, static_cast<double>(trace.duration_ns()) / 1e9, o.output);
}

nlohmann::json to_json(const TraceStats& s) {
  nlohmann::json j;
  j["packets"] = s.packets;
  j["bytes"] = s.bytes;
  j["flows"] = s.flows;
  j["max_concurrent_flows"] = s.max_concurrent_flows;
  j["duration_s"] = s.duration_s;
  j["ipv4_packets"] = s.ipv4_packets;
  j["ipv6_packets"] = s.ipv6_packets;
  j["non_first_fragments"] = s.non_first_fragments;
  j["packets_by_protocol"] = s.packets_by_protocol;
  j["flows_by_protocol"] = s.flows_by_protocol;
  j["parse_failures"] = s.parse_failures;
  j["concurrency"] = nlohmann::json::array();
  for (const auto& sample : s.concurrency) j["concurrency"].push_back({{"time_s", sample.time_s}, {"flows", sample.flows}});
  j["top_flows"] = nlohmann::json::array();
  for (const auto& flow : s.top_flows) {
    j["top_flows"].push_back({{"flow", flow.key}, {"packets", flow.packets}, {"bytes", flow.bytes}});
  }
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

void run_stats(const std::string& path, bool json, std::size_t top) {
  PacketStore trace;
  try {
    trace = PacketStore::load_pcap(path);
  } catch (const PcapError& e) {
    throw UserError(e.what());
  }
  const TraceStats stats = compute_trace_stats(trace, top);
  if (json) {
    fmt::print("{}\n", to_json(stats).dump());
  } else {
    print_text(path, stats);
  }
}

}  // namespace

void add_trace_commands(CLI::App& app) {
  auto* trace = app.add_subcommand("trace", "generate and inspect traces");
  trace->require_subcommand(1);

  auto gen_options = std::make_shared<GenOptions>();
  auto* gen = trace->add_subcommand("gen", "generate a synthetic trace");
  gen->add_option("--profile", gen_options->profile, "campus, uniform or zipf")
      ->check(CLI::IsMember({"campus", "uniform", "zipf"}));
  gen->add_option("--flows", gen_options->flows, "connections in the trace")->check(CLI::Range(1u, 100'000'000u));
  gen->add_option("--duration", gen_options->duration_s, "seconds (campus: sets the flow arrival rate)")
      ->check(CLI::PositiveNumber);
  gen->add_option("--pps", gen_options->pps, "packets per second (uniform, zipf)")->check(CLI::PositiveNumber);
  gen->add_option("--packets", gen_options->packets, "packets (uniform, zipf; default 10 per flow)");
  gen->add_option("--seed", gen_options->seed, "random seed");
  gen->add_option("--zipf-exponent", gen_options->zipf_exponent, "Zipf exponent s")->check(CLI::PositiveNumber);
  gen->add_option("--windows", gen_options->windows, "replay K shifted copies at once")->check(CLI::Range(1u, 256u));
  gen->add_option("--snaplen", gen_options->snaplen, "bytes stored per frame (campus; 0 = whole frames)");
  gen->add_option("--format", gen_options->format, "pcap or pcapng")->check(CLI::IsMember({"pcap", "pcapng"}));
  gen->add_option("-o,--output", gen_options->output, "output file")->required();
  gen->callback([gen_options] { run_gen(*gen_options); });

  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto top = std::make_shared<std::size_t>(10);
  auto* stats = trace->add_subcommand("stats", "statistics of a pcap or pcapng trace");
  stats->add_option("file", *path, "trace file")->required();
  stats->add_flag("--json", *json, "one JSON object");
  stats->add_option("--top", *top, "heaviest flows to list");
  stats->callback([path, json, top] { run_stats(*path, *json, *top); });
}

}  // namespace flowtrack::cli
