// Synthetic traffic, a pure function of its profile and seed.
//
//  - uniform: N flows with random 5-tuples drawn from a maximal-length LFSR (distinct, no locality);
//    every flow is sent once in LFSR order, then each further packet picks a flow uniformly.
//  - zipf: the same flows, but further packets pick flow k (k = 1..N) with probability ~ 1/k^s.
//  - campus: connections arriving as a Poisson process, each a full exchange in both directions:
//    TCP (handshake, heavy-tailed data, FIN or RST close), UDP (DNS-like query/response or longer
//    QUIC-like flows) and ICMP echo; clients in an inside network, servers on a few service addresses.
//
// Frames are Ethernet + IPv4 with correct checksums. Stored frames are cut at `snaplen` bytes while the
// wire length stays real, as header-only traces are; the parser handles the cut.
#pragma once

#include <cstdint>

#include "flowtrack/io/packet_store.hpp"

namespace flowtrack {

struct UniformProfile {
  std::uint32_t flows = 100'000;
  std::uint64_t packets = 1'000'000;  // at least `flows`
  double packets_per_second = 10e6;
  std::uint16_t frame_bytes = 64;
  std::uint64_t seed = 1;
};

struct ZipfProfile {
  UniformProfile base;
  double exponent = 1.0;
};

struct CampusProfile {
  std::uint32_t flows = 20'000;                // connections, each in both directions
  double new_flows_per_second = 20'000;
  double mean_data_packets = 8;                // per TCP connection, beyond handshake and close
  double pareto_shape = 1.3;                   // tail index of the data-packet count
  std::uint32_t max_data_packets = 20'000;
  double mean_duration_s = 1.0;
  double tcp_share = 0.80;
  double udp_share = 0.17;                     // the rest is ICMP echo
  std::uint32_t client_network = 0x0a000000;   // 10.0.0.0/16, host order
  std::uint8_t client_prefix_length = 16;
  std::uint32_t server_network = 0xc6120000;   // 198.18.0.0; servers are .1 to .servers
  std::uint32_t servers = 4;
  std::uint16_t snaplen = 128;
  std::uint64_t seed = 1;
};

// Throws std::invalid_argument for an impossible profile (zero flows, fewer packets than flows, ...).
PacketStore generate_uniform(const UniformProfile& profile);
PacketStore generate_zipf(const ZipfProfile& profile);
PacketStore generate_campus(const CampusProfile& profile);

}  // namespace flowtrack
