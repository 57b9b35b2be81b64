// `flowtrack sim sched` and `flowtrack sim afd`: their options and entry points.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowtrack::cli {

// Where the headers come from (one trace per service).
struct SimTraceOptions {
  std::string kind = "zipf";  // zipf, campus, pcap
  std::vector<std::string> pcaps;
  std::uint32_t zipf_flows = 100'000;
  std::uint64_t zipf_packets = 1'000'000;
  double zipf_exponent = 1.0;
  unsigned packet_bytes = 700;
  std::uint32_t campus_flows = 20'000;
  std::uint64_t seed = 1;
};

struct SimOptions {
  std::vector<std::string> policies{"laps", "afs", "fcfs", "rss"};
  std::string scenario;           // T1 .. T8
  std::string rates = "overload";  // underload (set 1), overload (set 2), equal
  std::vector<double> offered;    // total Mpps, split equally: a sweep when several
  SimTraceOptions trace;
  double duration_s = 1.0;
  unsigned cores = 16;
  unsigned queue = 32;
  unsigned qthresh = 16;
  unsigned low_water = 8;
  bool migrate_to_any_lighter = false;
  std::size_t annex = 512;
  // One packet in ten feeds the detector (the paper's §5.3: sampling down to 1/1000 finds the heavy
  // flows as well as observing every packet; here 1/10 does on both traces, docs/performance/scheduling.md), and
  // the detector's work per packet falls tenfold.
  double sampling = 0.1;
  double idle_us = 10;
  double timeline_ms = 0;
  bool migration_census = false;
  std::uint64_t seed = 1;
  unsigned reps = 1;
  bool json = false;
};

struct AfdOptions {
  SimTraceOptions trace;
  std::vector<std::size_t> annex{0, 64, 128, 256, 512, 1024, 2048};
  std::vector<double> sampling{1.0};
  std::size_t cache = 16;
  std::vector<std::size_t> windows;  // accuracy checked every this many packets (empty: at the end)
  std::uint64_t seed = 1;
  bool json = false;
};

void run_sim(SimOptions o);
void run_afd(const AfdOptions& o);

}  // namespace flowtrack::cli
