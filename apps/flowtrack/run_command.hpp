// `flowtrack run`: its options and entry point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/nf_kind.hpp"

namespace flowtrack::cli {

struct RunCommandOptions {
  NfKind nf = NfKind::lb;
  std::string config;
  std::string in, out;
  std::string out_format = "pcap";
  unsigned workers = 1;
  std::size_t burst = kDefaultBurst;  // packets per burst; 1: the per-packet path
  std::string table = "cuckoo";
  std::string scaling = "sharded";
  std::string aging = "wheel";
  std::string control_plane = "worker";  // concury: worker or thread
  // partition (RSS before the run, each worker replays its own queue), rss or laps (a dispatcher thread
  // feeding worker rings during the run: runtime/dispatched_run.hpp).
  std::string dispatch = "partition";
  std::size_t ring = 1024;          // dispatched: packet slots per worker ring
  std::uint64_t slow_worker_ns = 0;  // dispatched: extra busy work per packet on worker 0
  bool check = false;  // lb, concury: the consistency check on the verdicts (consistency_check.hpp)
  bool json = false;
  std::string dpdk;  // EAL arguments: run live on the ports of the configuration's [dataplane] (live_command.hpp)
  std::string state;         // live nat and lb: the state file read at the start, written at the stop
  bool start_empty = false;  // with state: a missing or refused file starts the run without state
  bool take_over = false;    // with state: the state handed over by the process running on the control socket
};

void run_command(const RunCommandOptions& o);

}  // namespace flowtrack::cli
