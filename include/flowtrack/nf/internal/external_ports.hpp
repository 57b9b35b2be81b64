// The external ports of one public address on one core, for the three protocols the NAT maps (TCP, UDP,
// ICMP identifiers): port by port, each protocol from a PortAllocator of its own (port_allocator.hpp), or
// in blocks, one PortBlocks for the three (port_blocks.hpp), as `block_size` says (0: port by port).
// The NAT asks for ports and holders here alike either way; only a saved state looks behind (which()).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/nf/internal/port_allocator.hpp"
#include "flowtrack/nf/internal/port_blocks.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

// A protocol's place among the three a NAT maps (anything else than TCP and UDP counts as ICMP).
constexpr unsigned port_protocol_index(std::uint8_t protocol) {
  return protocol == ipproto::kTcp ? 0 : protocol == ipproto::kUdp ? 1 : 2;
}

class ExternalPorts {
 public:
  static constexpr std::uint32_t kNoHolder = PortAllocator::kNoHolder;
  static_assert(PortAllocator::kNoHolder == PortBlocks::kNoHolder);

  // Ports first..last (host order) of `public_addr` (network order). Port by port, protocol i's
  // allocator is keyed with seed + i. Throws std::invalid_argument as PortAllocator and PortBlocks do.
  ExternalPorts(std::uint32_t public_addr, std::uint16_t first, std::uint16_t last, std::uint16_t block_size,
                Nanos quarantine, std::uint64_t seed) {
    if (block_size == 0) {
      for (unsigned p = 0; p < PortBlocks::kProtocols; ++p) allocators_.emplace_back(first, last, quarantine, seed + p);
    } else {
      blocks_.emplace(public_addr, first, last, block_size, quarantine, seed);
    }
  }

  // A port for `holder`, a mapping of inside address `subscriber` (network order), or 0 with the reason
  // in `refusal` (no_port, or log_full when a new block's record found no room).
  std::uint16_t allocate(std::uint32_t subscriber, std::uint8_t protocol, std::uint16_t preferred, Nanos now,
                         std::uint32_t holder, NfDrop& refusal) {
    const unsigned p = port_protocol_index(protocol);
    if (!blocks_) {
      const std::uint16_t port = allocators_[p].allocate(preferred, now, holder, endpoint_of(subscriber, protocol, preferred));
      if (port == 0) refusal = NfDrop::no_port;
      return port;
    }
    PortBlocks::Refusal why = PortBlocks::Refusal::none;
    const std::uint16_t port = blocks_->allocate(subscriber, p, preferred, now, holder, why);
    if (port == 0) refusal = why == PortBlocks::Refusal::log_full ? NfDrop::log_full : NfDrop::no_port;
    return port;
  }
  // Port by port: the port allocate() gives a mapping of that inside endpoint while the port is free
  // (PortAllocator::first_choice). With blocks: 0 (a subscriber's block decides, not the endpoint).
  std::uint16_t first_choice(std::uint32_t subscriber, std::uint8_t protocol, std::uint16_t preferred) const {
    if (blocks_) return 0;
    return allocators_[port_protocol_index(protocol)].first_choice(preferred, endpoint_of(subscriber, protocol, preferred));
  }
  void release(std::uint8_t protocol, std::uint16_t port, Nanos now) {
    const unsigned p = port_protocol_index(protocol);
    blocks_ ? blocks_->release(p, port, now) : allocators_[p].release(port, now);
  }
  std::uint32_t holder_of(std::uint8_t protocol, std::uint16_t port) const {
    const unsigned p = port_protocol_index(protocol);
    return blocks_ ? blocks_->holder_of(p, port) : allocators_[p].holder_of(port);
  }
  void prefetch(std::uint8_t protocol, std::uint16_t preferred) const {
    const unsigned p = port_protocol_index(protocol);
    blocks_ ? blocks_->prefetch(p, preferred) : allocators_[p].prefetch(preferred);
  }
  void prefetch_holder(std::uint8_t protocol, std::uint16_t port) const {
    const unsigned p = port_protocol_index(protocol);
    blocks_ ? blocks_->prefetch_holder(p, port) : allocators_[p].prefetch_holder(port);
  }

  // Blocks only: where their records go (port_blocks.hpp). Port by port there is nothing to record.
  void attach_log(PortBlockLog* log) {
    if (blocks_) blocks_->attach_log(log);
  }

  // What is behind: the blocks (nullptr port by port), or a protocol's allocator (port by port only).
  PortBlocks* blocks() { return blocks_ ? &*blocks_ : nullptr; }
  const PortBlocks* blocks() const { return blocks_ ? &*blocks_ : nullptr; }
  PortAllocator& allocator(std::uint8_t protocol) { return allocators_[port_protocol_index(protocol)]; }
  const PortAllocator& allocator(std::uint8_t protocol) const { return allocators_[port_protocol_index(protocol)]; }

 private:
  // The inside endpoint (address, protocol, port) whose keyed hash draws its candidates.
  static std::uint64_t endpoint_of(std::uint32_t subscriber, std::uint8_t protocol, std::uint16_t port) {
    return (std::uint64_t{subscriber} << 32) | (std::uint64_t{protocol} << 16) | port;
  }

  std::vector<PortAllocator> allocators_;  // by protocol index, port by port
  std::optional<PortBlocks> blocks_;
};

}  // namespace flowtrack
