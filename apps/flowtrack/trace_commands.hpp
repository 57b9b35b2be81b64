// `flowtrack trace gen` and `flowtrack trace stats`: their options and entry points.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowtrack::cli {

struct TraceGenOptions {
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

struct TraceStatsOptions {
  std::string path;
  bool json = false;
  std::size_t top = 10;  // heaviest flows listed
};

void run_trace_gen(const TraceGenOptions& o);
void run_trace_stats(const TraceStatsOptions& o);

}  // namespace flowtrack::cli
