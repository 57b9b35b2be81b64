#include "flowtrack/nf/icmp_answer.hpp"

#include <algorithm>
#include <cstring>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"

namespace flowtrack {

namespace {
constexpr std::size_t kIpHeader = 20;
constexpr std::size_t kIcmpHeader = 8;
constexpr std::size_t kEthernetHeader = 14;
constexpr std::size_t kVlanTag = 4;
constexpr std::size_t kQuotedTransport = 8;  // RFC 792: the first 64 bits of the datagram's data
}  // namespace

bool answer_with_icmp_error(NfPacket& packet, std::uint8_t type, std::uint8_t code, std::uint32_t source,
                            std::uint16_t next_hop_mtu) {
  const ParsedPacket& p = packet.parsed;
  if (p.ip_version != 4 || p.icmp_is_error || p.fragment_offset != 0) return false;
  std::uint8_t* const f = packet.frame.data();  // writable up to packet.room() (NfPacket's contract)
  const std::size_t l3 = p.l3_offset;
  const std::size_t ihl = std::size_t{f[l3] & 0x0fu} * 4;
  const std::size_t quote = std::min(ihl + kQuotedTransport, std::size_t{p.l3_end} - l3);
  const std::size_t length = l3 + kIpHeader + kIcmpHeader + quote;
  if (length > packet.room()) return false;
  const std::uint32_t sender = p.key4.src_addr;

  std::memmove(f + l3 + kIpHeader + kIcmpHeader, f + l3, quote);  // the quote first: the headers overwrite it
  // Of the link types the parser reads, only Ethernet puts the IP header 14 bytes (plus its VLAN tags)
  // in: Linux cooked captures use 16 or 20 and raw IP 0. Its MACs are swapped to send the answer back.
  if (l3 == kEthernetHeader + kVlanTag * p.vlan_count) {
    std::uint8_t mac[6];
    std::memcpy(mac, f, 6);
    std::memmove(f, f + 6, 6);
    std::memcpy(f + 6, mac, 6);
  }
  std::uint8_t* const ip = f + l3;
  std::memset(ip, 0, kIpHeader + kIcmpHeader);
  ip[0] = 0x45;  // version 4, 20-byte header
  store_be16(ip + 2, static_cast<std::uint16_t>(kIpHeader + kIcmpHeader + quote));
  ip[8] = 64;  // TTL
  ip[9] = ipproto::kIcmp;
  store_raw(ip + 12, source);
  store_raw(ip + 16, sender);
  store_be16(ip + 10, ipv4_header_checksum({ip, kIpHeader}));
  std::uint8_t* const icmp = ip + kIpHeader;
  icmp[0] = type;
  icmp[1] = code;
  store_be16(icmp + 6, next_hop_mtu);
  store_be16(icmp + 2, checksum_finish(checksum_add({icmp, kIcmpHeader + quote})));

  packet.frame = {f, length};
  packet.wire_length = static_cast<std::uint32_t>(length);
  return true;
}

}  // namespace flowtrack
