#include "flowtrack/packet/frame_builder.hpp"

#include <algorithm>
#include <cstring>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"

namespace flowtrack {
namespace {

std::uint8_t protocol_of(const FrameSpec& spec) {
  return spec.ip_version == 4 ? spec.key4.protocol : spec.key6.protocol;
}

std::size_t transport_header_size(const FrameSpec& spec) {
  switch (protocol_of(spec)) {
    case ipproto::kTcp: return 20;
    case ipproto::kUdp: return 8;
    case ipproto::kIcmp:
    case ipproto::kIcmpV6: return 8;
    default: return 0;
  }
}

std::size_t link_header_size(const FrameSpec& spec) {
  return spec.ethernet ? 14 + 4 * std::size_t{spec.vlan_count} : 0;
}

std::size_t l4_size(const FrameSpec& spec) {
  return transport_header_size(spec) + spec.icmp_quoted.size() + spec.payload_bytes;
}

}  // namespace

FrameSpec FrameSpec::tcp4(const FlowKeyV4& key, std::uint8_t flags, std::uint16_t payload) {
  FrameSpec spec;
  spec.key4 = key;
  spec.tcp_flags = flags;
  spec.payload_bytes = payload;
  return spec;
}

FrameSpec FrameSpec::udp4(const FlowKeyV4& key, std::uint16_t payload) {
  FrameSpec spec;
  spec.key4 = key;
  spec.payload_bytes = payload;
  return spec;
}

std::size_t frame_size(const FrameSpec& spec) {
  return link_header_size(spec) + (spec.ip_version == 4 ? 20 : 40) + l4_size(spec);
}

std::size_t build_frame(const FrameSpec& spec, std::span<std::uint8_t> out) {
  const std::size_t size = frame_size(spec);
  if ((spec.ip_version != 4 && spec.ip_version != 6) || out.size() < size || size > 0xffff || spec.vlan_count > 2) {
    return 0;
  }
  std::uint8_t* p = out.data();
  std::memset(p, 0, size);
  std::size_t off = 0;

  if (spec.ethernet) {
    std::memcpy(p, spec.dst_mac.data(), 6);
    std::memcpy(p + 6, spec.src_mac.data(), 6);
    off = 12;
    for (std::uint8_t i = 0; i < spec.vlan_count; ++i) {
      const bool outer_of_two = spec.vlan_count == 2 && i == 0;
      store_be16(p + off, outer_of_two ? 0x88a8 : 0x8100);
      store_be16(p + off + 2, spec.vlan_ids[i] & 0x0fff);
      off += 4;
    }
    store_be16(p + off, spec.ip_version == 4 ? 0x0800 : 0x86dd);
    off += 2;
  }

  const std::uint8_t protocol = protocol_of(spec);
  const std::size_t l4_length = l4_size(spec);
  const std::size_t l3 = off;
  std::uint32_t pseudo_sum = 0;
  if (spec.ip_version == 4) {
    p[l3] = 0x45;
    store_be16(p + l3 + 2, static_cast<std::uint16_t>(20 + l4_length));
    store_be16(p + l3 + 4, spec.ip_id);
    p[l3 + 8] = spec.ttl;
    p[l3 + 9] = protocol;
    store_raw(p + l3 + 12, spec.key4.src_addr);
    store_raw(p + l3 + 16, spec.key4.dst_addr);
    store_be16(p + l3 + 10, ipv4_header_checksum({p + l3, 20}));
    if (protocol != ipproto::kIcmp) {
      pseudo_sum = pseudo_header_sum_v4(p + l3 + 12, p + l3 + 16, protocol, static_cast<std::uint32_t>(l4_length));
    }
    off += 20;
  } else {
    p[l3] = 0x60;
    store_be16(p + l3 + 4, static_cast<std::uint16_t>(l4_length));
    p[l3 + 6] = protocol;
    p[l3 + 7] = spec.ttl;
    std::memcpy(p + l3 + 8, spec.key6.src_addr.data(), 16);
    std::memcpy(p + l3 + 24, spec.key6.dst_addr.data(), 16);
    pseudo_sum = pseudo_header_sum_v6(p + l3 + 8, p + l3 + 24, protocol, static_cast<std::uint32_t>(l4_length));
    off += 40;
  }

  const std::size_t l4 = off;
  const std::uint16_t src_port = spec.ip_version == 4 ? spec.key4.src_port : spec.key6.src_port;
  const std::uint16_t dst_port = spec.ip_version == 4 ? spec.key4.dst_port : spec.key6.dst_port;
  std::size_t checksum_offset = 0;
  switch (protocol) {
    case ipproto::kTcp:
      store_raw(p + l4, src_port);
      store_raw(p + l4 + 2, dst_port);
      store_be32(p + l4 + 4, spec.tcp_seq);
      store_be32(p + l4 + 8, spec.tcp_ack);
      p[l4 + 12] = 5 << 4;
      p[l4 + 13] = spec.tcp_flags;
      store_be16(p + l4 + 14, spec.tcp_window);
      checksum_offset = 16;
      break;
    case ipproto::kUdp:
      store_raw(p + l4, src_port);
      store_raw(p + l4 + 2, dst_port);
      store_be16(p + l4 + 4, static_cast<std::uint16_t>(l4_length));
      checksum_offset = 6;
      break;
    case ipproto::kIcmp:
    case ipproto::kIcmpV6:
      p[l4] = spec.icmp_type;
      p[l4 + 1] = spec.icmp_code;
      if (spec.icmp_quoted.empty()) {
        store_raw(p + l4 + 4, src_port);  // the query identifier
        store_be16(p + l4 + 6, spec.icmp_sequence);
      }
      checksum_offset = 2;
      break;
    default:
      break;
  }
  off += transport_header_size(spec);
  if (!spec.icmp_quoted.empty()) {
    std::memcpy(p + off, spec.icmp_quoted.data(), spec.icmp_quoted.size());
    off += spec.icmp_quoted.size();
  }
  std::memset(p + off, spec.payload_fill, spec.payload_bytes);
  if (transport_header_size(spec) != 0) {
    std::uint16_t checksum = transport_checksum(pseudo_sum, {p + l4, l4_length}, checksum_offset);
    // A computed UDP checksum of zero is sent as all ones: zero means "no checksum" (RFC 768).
    if (protocol == ipproto::kUdp && checksum == 0) checksum = 0xffff;
    store_be16(p + l4 + checksum_offset, checksum);
  }
  return size;
}

std::vector<std::uint8_t> build_frame(const FrameSpec& spec) {
  std::vector<std::uint8_t> frame(frame_size(spec));
  frame.resize(build_frame(spec, frame));
  return frame;
}

}  // namespace flowtrack
