// What a trace contains: volume, connections, how many are alive at once, protocol mix, heaviest flows,
// and the frames the parser rejected (by reason).
//
// A flow is a connection: both directions of a 5-tuple count as one. A flow is alive from its first to
// its last packet. Non-first fragments carry no ports and are counted apart, not as flows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "flowtrack/io/packet_store.hpp"

namespace flowtrack {

struct TraceStats {
  struct TopFlow {
    std::string key;  // in the direction of the flow's first packet
    std::uint64_t packets = 0;
    std::uint64_t bytes = 0;
  };
  struct ConcurrencySample {
    double time_s = 0;
    std::uint64_t flows = 0;
  };

  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;  // on the wire
  std::uint64_t flows = 0;
  std::uint64_t max_concurrent_flows = 0;
  double duration_s = 0;
  std::uint64_t ipv4_packets = 0;
  std::uint64_t ipv6_packets = 0;
  std::uint64_t non_first_fragments = 0;
  std::map<std::string, std::uint64_t> packets_by_protocol;
  std::map<std::string, std::uint64_t> flows_by_protocol;
  std::map<std::string, std::uint64_t> parse_failures;  // by ParseStatus name
  std::vector<ConcurrencySample> concurrency;            // evenly spaced over the trace
  std::vector<TopFlow> top_flows;                        // by packets, heaviest first
};

TraceStats compute_trace_stats(const PacketStore& trace, std::size_t top_flows = 10, std::size_t samples = 10);

}  // namespace flowtrack
