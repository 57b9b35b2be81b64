// The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//
// Every value here is the host-order number of a big-endian 16-bit field: load the field with
// load_be16, pass it in, store the result with store_be16.
#pragma once

#include <bit>
#include <cstdint>
#include <span>

namespace flowtrack {

// One's complement sum of the bytes as big-endian 16-bit words (an odd last byte is padded with zero),
// added to `sum`; not folded, so partial sums can be chained.
std::uint32_t checksum_add(std::span<const std::uint8_t> bytes, std::uint32_t sum = 0);

// Folds a partial sum to 16 bits and complements it: the value to store in a checksum field.
std::uint16_t checksum_finish(std::uint32_t sum);

// The checksum of an IPv4 header (its checksum field is skipped, so it need not be zeroed).
std::uint16_t ipv4_header_checksum(std::span<const std::uint8_t> header);

// Pseudo-header partial sums (RFC 793/768 for IPv4, RFC 8200 section 8.1 for IPv6).
std::uint32_t pseudo_header_sum_v4(const std::uint8_t* src_addr, const std::uint8_t* dst_addr, std::uint8_t protocol,
                                   std::uint32_t l4_length);
std::uint32_t pseudo_header_sum_v6(const std::uint8_t* src_addr, const std::uint8_t* dst_addr, std::uint8_t protocol,
                                   std::uint32_t l4_length);

// The transport checksum of `segment` (header + payload) with the checksum field at byte
// `checksum_offset` taken as zero, given the pseudo-header sum (use 0 for ICMPv4, which has none).
std::uint16_t transport_checksum(std::uint32_t pseudo_sum, std::span<const std::uint8_t> segment,
                                 std::size_t checksum_offset);

// RFC 1624 eqn. 3 for any number of changed 16-bit words of the covered data: HC' = ~(~HC + sum of
// (~m + m') over the changed words), folded once when applied. Folding once gives the same checksum as
// applying the changes one word at a time (both folds land in 1..0xffff unless every term is zero, and
// are congruent modulo 0xffff), so a rewrite of several fields costs one fold per checksum it updates.
// Unlike the rest of this file, it works in either byte order, as long as the words and the checksum
// are all taken in the same one (RFC 1071 section 2(B): swapping the bytes of every term swaps those of
// the one's complement sum): the rewrites give it the fields as they lie in the frame, unswapped.
class ChecksumDelta {
 public:
  void change16(std::uint16_t old_word, std::uint16_t new_word) {
    sum_ += std::uint32_t{static_cast<std::uint16_t>(~old_word)} + new_word;
  }
  // A 32-bit field (an IPv4 address): its two words' terms at once. 2^16 = 1 modulo 0xffff, so the
  // one's complement sum of ~old_value and new_value as 32-bit numbers, folded, is congruent to the sum
  // of the two word terms, and is 0 exactly when they both are.
  void change32(std::uint32_t old_value, std::uint32_t new_value) {
    std::uint32_t sum = ~old_value + new_value;
    sum += sum < new_value;  // the end-around carry
    sum_ += fold(sum);
  }
  std::uint16_t applied_to(std::uint16_t checksum) const {
    // sum_ holds a handful of 17-bit terms: the 32-bit sum cannot overflow.
    return static_cast<std::uint16_t>(~fold(std::uint32_t{static_cast<std::uint16_t>(~checksum)} + sum_));
  }

 private:
  // The one's complement sum of the two 16-bit halves of `sum`: the upper half of sum + (sum rotated by
  // 16) is high + low plus the carry out of the lower half, the end-around carry. It is 0 only for a
  // sum of 0, else in 1..0xffff: the fold of every term alike, however they were grouped.
  static std::uint32_t fold(std::uint32_t sum) { return (sum + std::rotl(sum, 16)) >> 16; }

  std::uint32_t sum_ = 0;
};

// One 16-bit word changed from old_word to new_word.
inline std::uint16_t checksum_update16(std::uint16_t checksum, std::uint16_t old_word, std::uint16_t new_word) {
  ChecksumDelta delta;
  delta.change16(old_word, new_word);
  return delta.applied_to(checksum);
}

// A 32-bit field (an IPv4 address) changed.
inline std::uint16_t checksum_update32(std::uint16_t checksum, std::uint32_t old_value, std::uint32_t new_value) {
  ChecksumDelta delta;
  delta.change32(old_value, new_value);
  return delta.applied_to(checksum);
}

}  // namespace flowtrack
