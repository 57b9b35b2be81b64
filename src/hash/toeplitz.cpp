#include "flowtrack/hash/toeplitz.hpp"

#include <bit>
#include <cstring>
#include <stdexcept>

namespace flowtrack {

const std::array<std::uint8_t, 40> kMicrosoftRssKey = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

const std::array<std::uint8_t, 40> kSymmetricRssKey = [] {
  std::array<std::uint8_t, 40> key{};
  for (std::size_t i = 0; i < key.size(); i += 2) {
    key[i] = 0x6d;
    key[i + 1] = 0x5a;
  }
  return key;
}();

namespace {

// The 32 key bits starting at bit `bit` (MSB-first numbering).
std::uint32_t key_window(std::span<const std::uint8_t> key, std::size_t bit) {
  std::uint64_t window = 0;
  const std::size_t first = bit / 8;
  for (std::size_t i = 0; i < 5; ++i) {
    window = (window << 8) | (first + i < key.size() ? key[first + i] : 0);
  }
  return static_cast<std::uint32_t>(window >> (8 - bit % 8));
}

template <class Key>
std::uint32_t hash_tuple(const ToeplitzHasher& hasher, const Key& key, bool with_ports, std::size_t addr_bytes) {
  std::uint8_t input[ToeplitzHasher::kMaxInputBytes];
  std::memcpy(input, &key.src_addr, addr_bytes);
  std::memcpy(input + addr_bytes, &key.dst_addr, addr_bytes);
  std::memcpy(input + 2 * addr_bytes, &key.src_port, 2);
  std::memcpy(input + 2 * addr_bytes + 2, &key.dst_port, 2);
  return hasher.hash({input, 2 * addr_bytes + (with_ports ? 4 : 0)});
}

}  // namespace

std::uint32_t toeplitz_reference(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input) {
  std::uint32_t result = 0;
  for (std::size_t bit = 0; bit < input.size() * 8; ++bit) {
    if (input[bit / 8] & (0x80 >> (bit % 8))) {
      result ^= key_window(key, bit);
    }
  }
  return result;
}

ToeplitzHasher::ToeplitzHasher(std::span<const std::uint8_t> key)
    : tables_(kMaxInputBytes * 256) {
  if (key.size() < kMaxInputBytes + 4) throw std::invalid_argument("Toeplitz key must have at least 40 bytes");
  for (std::size_t position = 0; position < kMaxInputBytes; ++position) {
    for (std::uint32_t byte = 0; byte < 256; ++byte) {
      std::uint32_t value = 0;
      for (std::size_t bit = 0; bit < 8; ++bit) {
        if (byte & (0x80u >> bit)) value ^= key_window(key, position * 8 + bit);
      }
      tables_[position * 256 + byte] = value;
    }
  }
}

std::uint32_t ToeplitzHasher::hash(std::span<const std::uint8_t> input) const {
  std::uint32_t result = 0;
  for (std::size_t position = 0; position < input.size(); ++position) {
    result ^= tables_[position * 256 + input[position]];
  }
  return result;
}

std::uint32_t ToeplitzHasher::hash(const FlowKeyV4& key, bool with_ports) const {
  return hash_tuple(*this, key, with_ports, 4);
}

std::uint32_t ToeplitzHasher::hash(const FlowKeyV6& key, bool with_ports) const {
  return hash_tuple(*this, key, with_ports, 16);
}

RedirectionTable::RedirectionTable(unsigned queues, std::size_t entries)
    : entries_(entries), mask_(static_cast<std::uint32_t>(entries - 1)), queues_(queues) {
  if (entries == 0 || !std::has_single_bit(entries)) {
    throw std::invalid_argument("redirection table size must be a power of two");
  }
  fill_round_robin(queues);
}

void RedirectionTable::fill_round_robin(unsigned queues) {
  if (queues == 0) throw std::invalid_argument("redirection table needs at least one queue");
  queues_ = queues;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    entries_[i] = static_cast<std::uint16_t>(i % queues);
  }
}

}  // namespace flowtrack
