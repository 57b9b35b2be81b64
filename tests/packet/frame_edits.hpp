// Edits that turn a frame from build_frame into the shapes the builder does not make (IPv4 options and
// fragments, IPv6 extension headers), keeping every length field and the IPv4 header checksum right.
// Shared by the parser tests and the fuzzer's seed corpus.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"

namespace flowtrack::test {

inline void refresh_ipv4_header_checksum(std::vector<std::uint8_t>& frame, std::size_t l3) {
  const std::size_t ihl = (frame[l3] & 0x0fu) * 4u;
  store_be16(frame.data() + l3 + 10, ipv4_header_checksum({frame.data() + l3, ihl}));
}

// Grows the IPv4 header at `l3` (which must have no options yet) by `words` 4-byte words of NOP options.
// The transport checksum is unaffected: the pseudo header does not include options.
inline void add_ipv4_options(std::vector<std::uint8_t>& frame, std::size_t l3, std::uint8_t words) {
  constexpr std::uint8_t kNop = 0x01;
  frame.insert(frame.begin() + static_cast<std::ptrdiff_t>(l3 + 20), std::size_t{words} * 4, kNop);
  frame[l3] = static_cast<std::uint8_t>(0x40 | (5 + words));
  store_be16(frame.data() + l3 + 2, static_cast<std::uint16_t>(load_be16(frame.data() + l3 + 2) + words * 4));
  refresh_ipv4_header_checksum(frame, l3);
}

// Marks the IPv4 packet at `l3` as a fragment (the bytes after the header stay as they are).
inline void set_ipv4_fragment(std::vector<std::uint8_t>& frame, std::size_t l3, std::uint16_t id,
                              std::uint16_t offset_bytes, bool more_fragments) {
  store_be16(frame.data() + l3 + 4, id);
  store_be16(frame.data() + l3 + 6, static_cast<std::uint16_t>((offset_bytes / 8) | (more_fragments ? 0x2000 : 0)));
  refresh_ipv4_header_checksum(frame, l3);
}

namespace ipv6ext {
inline constexpr std::uint8_t kHopByHop = 0;
inline constexpr std::uint8_t kRouting = 43;
inline constexpr std::uint8_t kFragment = 44;
inline constexpr std::uint8_t kAuthentication = 51;
inline constexpr std::uint8_t kDestinationOptions = 60;
}  // namespace ipv6ext

// Inserts one extension header of `type` right after the fixed IPv6 header at `l3`, in front of the
// existing chain. `body` is the header after its first two bytes (next header, length), so its size
// must make the whole header a multiple of 8 bytes (of 4 for AH); for a fragment header it is the
// 6 bytes of offset/flags and identification.
inline void insert_ipv6_extension(std::vector<std::uint8_t>& frame, std::size_t l3, std::uint8_t type,
                                  const std::vector<std::uint8_t>& body) {
  const std::size_t size = body.size() + 2;
  std::vector<std::uint8_t> header;
  header.push_back(frame[l3 + 6]);  // the new header points at what the fixed header pointed at
  if (type == ipv6ext::kFragment) {
    header.push_back(0);  // reserved
  } else if (type == ipv6ext::kAuthentication) {
    header.push_back(static_cast<std::uint8_t>(size / 4 - 2));
  } else {
    header.push_back(static_cast<std::uint8_t>(size / 8 - 1));
  }
  header.insert(header.end(), body.begin(), body.end());
  frame.insert(frame.begin() + static_cast<std::ptrdiff_t>(l3 + 40), header.begin(), header.end());
  frame[l3 + 6] = type;
  store_be16(frame.data() + l3 + 4, static_cast<std::uint16_t>(load_be16(frame.data() + l3 + 4) + size));
}

// The 6-byte body of a fragment header.
inline std::vector<std::uint8_t> ipv6_fragment_body(std::uint32_t id, std::uint16_t offset_bytes, bool more_fragments) {
  std::vector<std::uint8_t> body(6);
  store_be16(body.data(), static_cast<std::uint16_t>((offset_bytes & 0xfff8) | (more_fragments ? 1 : 0)));
  store_be32(body.data() + 2, id);
  return body;
}

}  // namespace flowtrack::test
