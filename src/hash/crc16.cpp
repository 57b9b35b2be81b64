#include "flowtrack/hash/crc16.hpp"

#include <array>

namespace flowtrack {
namespace {

constexpr std::uint16_t kPolynomial = 0x1021;

constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? (crc << 1) ^ kPolynomial : crc << 1;
    }
    table[byte] = static_cast<std::uint16_t>(crc);
  }
  return table;
}

constexpr auto kCrc16Table = make_crc16_table();

// The 5-tuple part of a key: addresses, ports, protocol.
template <class Key>
std::span<const std::uint8_t> tuple_bytes(const Key& key) {
  return {reinterpret_cast<const std::uint8_t*>(&key), sizeof(Key) - sizeof(key.padding)};
}

}  // namespace

std::uint16_t crc16_ccitt_false(std::span<const std::uint8_t> bytes) {
  std::uint16_t crc = 0xffff;
  for (std::uint8_t byte : bytes) {
    crc = static_cast<std::uint16_t>((crc << 8) ^ kCrc16Table[((crc >> 8) ^ byte) & 0xff]);
  }
  return crc;
}

std::uint16_t crc16_flow(const FlowKeyV4& key) { return crc16_ccitt_false(tuple_bytes(key)); }
std::uint16_t crc16_flow(const FlowKeyV6& key) { return crc16_ccitt_false(tuple_bytes(key)); }

}  // namespace flowtrack
