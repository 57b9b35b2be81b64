// The Toeplitz hash that NICs use for Receive Side Scaling, and the redirection table that turns the
// hash into a receive queue (= a worker core).
//
// The input is the tuple in network byte order: source address, destination address, then (when the
// hash covers ports) source port and destination port. Bit i of the input, counted from the most
// significant bit of the first byte, selects the 32-bit window of the key that starts at key bit i; the
// hash is the XOR of the selected windows. This implementation precomputes, for every input byte
// position, the XOR for each of the 256 byte values, so a hash costs one table load per input byte.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

// The key of Microsoft's RSS specification and verification suite, the default of most NICs.
extern const std::array<std::uint8_t, 40> kMicrosoftRssKey;
// 0x6d5a repeated: under it the hash of a connection's two directions is the same, so both land on one
// core (the key's 16-bit period makes swapping 32-bit addresses and 16-bit ports invisible).
extern const std::array<std::uint8_t, 40> kSymmetricRssKey;

// Bit-by-bit reference, for tests.
std::uint32_t toeplitz_reference(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input);

class ToeplitzHasher {
 public:
  // Longest input: two IPv6 addresses and two ports.
  static constexpr std::size_t kMaxInputBytes = 36;

  // The key must have at least 40 bytes (enough for the longest input).
  explicit ToeplitzHasher(std::span<const std::uint8_t> key = kMicrosoftRssKey);

  // `input` holds at most kMaxInputBytes bytes.
  std::uint32_t hash(std::span<const std::uint8_t> input) const;
  std::uint32_t hash(const FlowKeyV4& key, bool with_ports = true) const;
  std::uint32_t hash(const FlowKeyV6& key, bool with_ports = true) const;

 private:
  // tables_[position * 256 + byte]: XOR of the key windows that `byte` selects at `position`.
  std::vector<std::uint32_t> tables_;
};

// Maps a hash to a queue like a NIC's RETA: queue = entries[hash mod size], size a power of two.
class RedirectionTable {
 public:
  static constexpr std::size_t kDefaultEntries = 128;

  // Fills the entries round-robin over `queues` (which must be at least 1).
  explicit RedirectionTable(unsigned queues, std::size_t entries = kDefaultEntries);

  unsigned queue(std::uint32_t hash) const { return entries_[hash & mask_]; }

  void fill_round_robin(unsigned queues);
  void set(std::size_t index, unsigned queue) { entries_.at(index) = static_cast<std::uint16_t>(queue); }
  std::size_t size() const { return entries_.size(); }
  unsigned queues() const { return queues_; }

 private:
  std::vector<std::uint16_t> entries_;
  std::uint32_t mask_;
  unsigned queues_;
};

}  // namespace flowtrack
