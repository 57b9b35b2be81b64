// The packet headers a simulated service replays: which flow each packet belongs to and its size, plus
// each flow's two hashes. Only headers come from a trace; arrival times come from the rate model.
//
// Flows are numbered densely in order of first appearance. A flow is one direction of a 5-tuple (IPv4 or
// IPv6). Packets that do not parse as IP are skipped and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flowtrack/io/packet_store.hpp"

namespace flowtrack {

struct HeaderTrace {
  std::vector<std::uint32_t> flow_of_packet;
  std::vector<std::uint16_t> bytes_of_packet;  // wire length, clamped to 65535
  std::vector<std::uint16_t> crc16_of_flow;    // crc16_flow (CRC-16/CCITT-FALSE over the 5-tuple)
  std::vector<std::uint32_t> rss_hash_of_flow; // Toeplitz, Microsoft key, 4-tuple (2-tuple without ports)
  std::size_t skipped = 0;

  std::size_t packets() const { return flow_of_packet.size(); }
  std::size_t flows() const { return crc16_of_flow.size(); }
};

// Throws std::invalid_argument when no packet of the store parses as IP.
HeaderTrace extract_headers(const PacketStore& store);

}  // namespace flowtrack
