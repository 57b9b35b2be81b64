// `flowtrack trace gen`, `flowtrack trace stats` and `flowtrack trace ports`: their options and entry
// points.
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

// `trace ports`: a trace captured on a function's client side (the LB's clients, the NAT's inside link)
// as the function's live ports receive it, for a DPDK port that replays a capture (net_pcap's rx_pcap,
// one file a queue, infinite_rx=1 to loop it). Its answers become what reached the function (the
// rehearsal, replay_rehearsal.hpp: from the backend the LB chose, to the external endpoint the NAT
// allocated), with `workers` instances as the live data plane runs them, each connection on the worker
// that owns it live (packet_owner.hpp), so that the NAT's external ports come from its owner's slice.
// Each frame goes to the file of the port whose side it arrives on ([[dataplane.port]] role) and of
// the RX queue it lands on: `rss`, the queue the port's RSS gives it (the symmetric Toeplitz hash and a
// round-robin redirection table, as dpdk_port_group.cpp configures a NIC); `owner`, its owner's (flow
// rules that steer each connection to its worker: no hand-offs). Its destination MAC becomes its port's.
// Files: <output>-<role>-<queue>.pcap.
struct TracePortsOptions {
  std::string nf = "lb";  // lb or nat
  std::string config;     // the live run's: the function's sections and [dataplane]
  unsigned workers = 1;
  unsigned queues = 1;  // RX queues of each port
  std::string split = "rss";
  std::vector<std::string> macs;  // each port's, in [[dataplane.port]] order
  std::string input, output;
};

void run_trace_gen(const TraceGenOptions& o);
void run_trace_stats(const TraceStatsOptions& o);
void run_trace_ports(const TracePortsOptions& o);

}  // namespace flowtrack::cli
