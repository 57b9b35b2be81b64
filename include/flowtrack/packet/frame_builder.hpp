// Builds well-formed frames (every length and checksum right) for tests, the synthetic traffic
// generator, and network functions that answer with packets of their own (ICMP errors).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

struct FrameSpec {
  // Link layer: Ethernet II with up to two VLAN tags (outer first, 802.1ad then 802.1Q), or none.
  bool ethernet = true;
  std::array<std::uint8_t, 6> dst_mac{0x02, 0, 0, 0, 0, 0x02};
  std::array<std::uint8_t, 6> src_mac{0x02, 0, 0, 0, 0, 0x01};
  std::uint8_t vlan_count = 0;
  std::array<std::uint16_t, 2> vlan_ids{0, 0};

  // Network layer: IPv4 when ip_version == 4 (key4 used), IPv6 when 6 (key6 used). The key's ports are
  // the TCP/UDP ports, or the ICMP query identifier (src_port) for ICMP queries.
  std::uint8_t ip_version = 4;
  FlowKeyV4 key4;
  FlowKeyV6 key6;
  std::uint8_t ttl = 64;
  std::uint16_t ip_id = 0;

  // Transport layer.
  std::uint8_t tcp_flags = 0;
  std::uint32_t tcp_seq = 0;
  std::uint32_t tcp_ack = 0;
  std::uint16_t tcp_window = 65535;
  std::uint8_t icmp_type = 8;  // for ICMP / ICMPv6: echo request by default (128 for v6 is set by the caller)
  std::uint8_t icmp_code = 0;
  std::uint16_t icmp_sequence = 0;
  // For an ICMP error: the original packet (from its IP header on) to quote after the ICMP header.
  std::span<const std::uint8_t> icmp_quoted;

  std::uint16_t payload_bytes = 0;  // every payload byte is payload_fill
  std::uint8_t payload_fill = 0;

  // Convenience for the common cases.
  static FrameSpec tcp4(const FlowKeyV4& key, std::uint8_t flags, std::uint16_t payload = 0);
  static FrameSpec udp4(const FlowKeyV4& key, std::uint16_t payload = 0);
};

// The size build_frame will write for `spec`.
std::size_t frame_size(const FrameSpec& spec);

// Writes the frame into `out` without allocating; returns the bytes written, or 0 when `out` is too
// small or the spec's protocol does not match its key.
std::size_t build_frame(const FrameSpec& spec, std::span<std::uint8_t> out);

// The same into a new vector (tests and tools).
std::vector<std::uint8_t> build_frame(const FrameSpec& spec);

}  // namespace flowtrack
