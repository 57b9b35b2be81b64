#include "flowtrack/hash/crc32c.hpp"

#include <array>

namespace flowtrack {
namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

constexpr std::array<std::uint32_t, 256> make_crc32c_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) ? (crc >> 1) ^ kReflectedPolynomial : crc >> 1;
    }
    table[byte] = crc;
  }
  return table;
}

constexpr auto kCrc32cTable = make_crc32c_table();

}  // namespace

std::uint32_t crc32c_update_portable(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
  for (std::uint8_t byte : bytes) {
    crc = kCrc32cTable[(crc ^ byte) & 0xff] ^ (crc >> 8);
  }
  return crc;
}

std::uint32_t crc32c_update(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
#if defined(__SSE4_2__)
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    crc = static_cast<std::uint32_t>(_mm_crc32_u64(crc, word));
  }
  for (; i < bytes.size(); ++i) {
    crc = _mm_crc32_u8(crc, bytes[i]);
  }
  return crc;
#else
  return crc32c_update_portable(crc, bytes);
#endif
}

}  // namespace flowtrack
