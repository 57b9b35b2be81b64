// Trace multiplication by shifted windows, the method [conntrack-study] uses to turn a campus trace into
// 100 Gbps of traffic while keeping its temporal structure.
//
// Copy i (0 <= i < windows) replays the original trace rotated to start at offset i * D / windows
// (D = the trace's duration; packets before the offset follow those after it, shifted by D), rebased to
// time 0, so each copy keeps every inter-arrival gap of the original. Copies are made distinct by moving
// the client side: an IPv4 address inside `client_network`/`client_prefix_length` gets i added to the
// octets just above the prefix's host part, i.e. 10.0.x.y becomes 10.i.x.y for the default /16.
// Addresses outside the client network (the servers) are kept, so service addresses stay valid VIPs.
// Checksums are updated. IPv6 packets are copied without a shift (and so are not distinct).
// All copies are merged in time order.
#pragma once

#include <cstdint>

#include "flowtrack/io/packet_store.hpp"

namespace flowtrack {

struct MultiplyOptions {
  unsigned windows = 2;
  std::uint32_t client_network = 0x0a000000;  // host order
  std::uint8_t client_prefix_length = 16;
};

// Throws std::invalid_argument when `windows` copies do not fit above the client prefix.
PacketStore multiply_trace(const PacketStore& trace, const MultiplyOptions& options);

}  // namespace flowtrack
