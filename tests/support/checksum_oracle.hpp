// Full checksum recomputation: the oracle every incremental update (RFC 1624) is checked against.
#pragma once

#include <span>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack::testing {

inline bool ipv4_header_valid(std::span<const std::uint8_t> frame, const ParsedPacket& pkt) {
  const std::size_t ihl = (frame[pkt.l3_offset] & 0x0f) * 4u;
  return checksum_finish(checksum_add({frame.data() + pkt.l3_offset, ihl})) == 0;
}

inline bool transport_valid(std::span<const std::uint8_t> frame, const ParsedPacket& pkt) {
  const std::uint8_t* ip = frame.data() + pkt.l3_offset;
  const std::size_t l4_length = pkt.l3_end - pkt.l4_offset;
  std::span<const std::uint8_t> segment{frame.data() + pkt.l4_offset, l4_length};
  std::uint32_t pseudo = 0;
  if (pkt.ip_version == 4 && pkt.protocol() != ipproto::kIcmp) {
    pseudo = pseudo_header_sum_v4(ip + 12, ip + 16, pkt.protocol(), static_cast<std::uint32_t>(l4_length));
  } else if (pkt.ip_version == 6) {
    pseudo = pseudo_header_sum_v6(ip + 8, ip + 24, pkt.protocol(), static_cast<std::uint32_t>(l4_length));
  }
  if (pkt.protocol() == ipproto::kUdp && load_be16(frame.data() + pkt.l4_offset + 6) == 0) return true;
  return checksum_finish(checksum_add(segment, pseudo)) == 0;
}

}  // namespace flowtrack::testing
