#include "flowtrack/packet/checksum.hpp"

#include "flowtrack/packet/bytes.hpp"

namespace flowtrack {

std::uint32_t checksum_add(std::span<const std::uint8_t> bytes, std::uint32_t sum) {
  // A 64-bit accumulator cannot overflow for any packet size we handle; folding happens once at the end.
  std::uint64_t acc = sum;
  std::size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) {
    acc += load_be16(bytes.data() + i);
  }
  if (i < bytes.size()) {
    acc += std::uint32_t{bytes[i]} << 8;
  }
  while (acc >> 32) {
    acc = (acc & 0xffffffffu) + (acc >> 32);
  }
  return static_cast<std::uint32_t>(acc);
}

std::uint16_t checksum_finish(std::uint32_t sum) {
  std::uint64_t folded = sum;
  while (folded >> 16) {
    folded = (folded & 0xffff) + (folded >> 16);
  }
  return static_cast<std::uint16_t>(~folded);
}

std::uint16_t ipv4_header_checksum(std::span<const std::uint8_t> header) {
  std::uint32_t sum = checksum_add(header.first(10));
  sum = checksum_add(header.subspan(12), sum);
  return checksum_finish(sum);
}

std::uint32_t pseudo_header_sum_v4(const std::uint8_t* src_addr, const std::uint8_t* dst_addr, std::uint8_t protocol,
                                   std::uint32_t l4_length) {
  std::uint32_t sum = checksum_add({src_addr, 4});
  sum = checksum_add({dst_addr, 4}, sum);
  return sum + protocol + l4_length;
}

std::uint32_t pseudo_header_sum_v6(const std::uint8_t* src_addr, const std::uint8_t* dst_addr, std::uint8_t protocol,
                                   std::uint32_t l4_length) {
  std::uint32_t sum = checksum_add({src_addr, 16});
  sum = checksum_add({dst_addr, 16}, sum);
  return sum + (l4_length >> 16) + (l4_length & 0xffff) + protocol;
}

std::uint16_t transport_checksum(std::uint32_t pseudo_sum, std::span<const std::uint8_t> segment,
                                 std::size_t checksum_offset) {
  std::uint32_t sum = checksum_add(segment.first(checksum_offset), pseudo_sum);
  // The checksum field itself counts as zero; the bytes after it continue at an even offset.
  return checksum_finish(checksum_add(segment.subspan(checksum_offset + 2), sum));
}

}  // namespace flowtrack
