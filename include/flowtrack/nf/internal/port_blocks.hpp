// The external ports of one public address that one core may hand out, given to subscribers in blocks
// (port block allocation, as carrier-grade NATs do so that their log holds one record per block rather
// than one per session: RFC 6888 REQ-12, RFC 7422). The core's slice of the port range (port_allocator.hpp
// says why there are slices) is cut into blocks of `block_size` consecutive ports, the last one shorter
// when the slice is not a multiple. A block serves one subscriber (an inside address) for TCP, UDP and
// ICMP alike, so a public address and a port name one subscriber at any time whatever the protocol.
//
// allocate() gives a subscriber a port of the protocol: the preferred one (its inside port) when it lies
// in one of the subscriber's blocks and is free there, else a random free port of the first of its blocks
// that has one, else a port of a new block, drawn uniformly among the free blocks (RFC 6056: neither
// the block nor the port tells which came before). A block goes back when its last port in use does;
// every handing out and taking back of a block is a record in the log attached (port_block_log.hpp),
// and a block is refused when the log has no room for its record.
//
// Quarantine (RFC 6888 REQ-8), per port and per block: a freed port waits `quarantine` before it is given
// again, even to its own subscriber; a freed block waits it before another subscriber gets it. A port is
// in exactly one of three places for each protocol: in use (it has a holder), in its protocol's
// quarantine queue, or free; a block is held, in the block quarantine queue, or free. A free block's
// ports are all free once the port quarantines due by then have ended: its ports were released before
// it and waited the same time (allocate() ends the port quarantines before it takes a block).
//
// Costs: allocation in a held block walks its free-port bitmap (block_size / 64 words); a new block is
// one draw among the free blocks. Nothing allocates but the subscriber map, reserved for one entry per block.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <cstdint>
#include <vector>

#include "flowtrack/util/time.hpp"
#include "flowtrack/util/random.hpp"
#include "flowtrack/nf/port_block_log.hpp"
#include "flowtrack/nf/internal/quarantine_queue.hpp"

namespace flowtrack {

class PortBlocks {
 public:
  static constexpr std::uint32_t kNoHolder = ~std::uint32_t{0};
  static constexpr unsigned kProtocols = 3;  // TCP, UDP, ICMP: port_protocol_index()

  enum class Refusal : std::uint8_t { none, no_port, log_full };

  // Ports first..last (host order) of `public_addr` (network order), in blocks of block_size (1 <= block_size).
  // Throws std::invalid_argument for first == 0, first > last or block_size == 0.
  PortBlocks(std::uint32_t public_addr, std::uint16_t first, std::uint16_t last, std::uint16_t block_size,
             Nanos quarantine, std::uint64_t seed);

  // Records go to `log` from now on (nullptr: none). The blocks held already owe it their release
  // records: the caller has had it adopt them (PortBlockLog::adopt_held_blocks).
  void attach_log(PortBlockLog* log) { log_ = log; }

  // A port of protocol index `protocol` for `holder` (anything but kNoHolder) of subscriber `subscriber`
  // (network order), or 0 with the reason in `refusal`.
  std::uint16_t allocate(std::uint32_t subscriber, unsigned protocol, std::uint16_t preferred, Nanos now, std::uint32_t holder,
                         Refusal& refusal);
  // Ends the use of a port handed out by allocate(); anything else is ignored. The port's block goes back
  // with its last port in use.
  void release(unsigned protocol, std::uint16_t port, Nanos now);

  bool owns(std::uint16_t port) const { return port >= first_ && port <= last_; }
  std::uint32_t holder_of(unsigned protocol, std::uint16_t port) const {
    return owns(port) ? holders_[protocol][port - first_] : kNoHolder;
  }
  void prefetch_holder(unsigned protocol, std::uint16_t port) const {
    if (owns(port)) __builtin_prefetch(&holders_[protocol][port - first_]);
  }
  // What allocate(preferred) reads first: the preferred port's block and its free-port word.
  void prefetch(unsigned protocol, std::uint16_t preferred) const {
    if (!owns(preferred)) return;
    const std::size_t slot = preferred - first_;
    __builtin_prefetch(&blocks_[slot / block_size_]);
    __builtin_prefetch(&free_words_[protocol][slot / 64]);
  }

  std::uint32_t public_addr() const { return public_addr_; }
  std::uint16_t block_size() const { return block_size_; }
  std::size_t block_count() const { return blocks_.size(); }
  std::size_t blocks_held() const { return held_; }
  std::size_t in_use_count() const { return in_use_; }

  // A saved state put back into a fresh instance (nf/nat_snapshot.hpp), all false with nothing changed
  // when the request does not fit: the block starting at `first_port` held by `subscriber` (it must be
  // free); a port of a held block to `holder`; a free block or a free port into quarantine until
  // `free_at`, in the saved order.
  bool restore_block(std::uint32_t subscriber, std::uint16_t first_port);
  bool restore_in_use(std::uint32_t subscriber, unsigned protocol, std::uint16_t port, std::uint32_t holder);
  bool restore_quarantined_block(std::uint16_t first_port, Nanos free_at);
  bool restore_quarantined_port(unsigned protocol, std::uint16_t port, Nanos free_at);
  // After a restore: gives back (and logs) every held block with no port in use; returns how many.
  std::size_t give_back_unused(Nanos now);

  // What a saved state holds: visit(subscriber, first_port, last_port) for every held block;
  // visit(first_port, free_at) for every block in quarantine and visit(protocol, port, free_at) for every
  // port in quarantine, the next one free first.
  template <class Visit>
  void for_each_held_block(Visit&& visit) const {
    for (std::uint32_t b = 0; b < blocks_.size(); ++b) {
      if (blocks_[b].state == BlockState::held) visit(blocks_[b].owner, first_port_of(b), last_port_of(b));
    }
  }
  template <class Visit>
  void for_each_quarantined_block(Visit&& visit) const {
    block_quarantine_.for_each([&](const auto& entry) { visit(first_port_of(entry.item), entry.free_at); });
  }
  template <class Visit>
  void for_each_quarantined_port(Visit&& visit) const {
    for (unsigned p = 0; p < kProtocols; ++p) {
      port_quarantine_[p].for_each([&](const auto& entry) { visit(p, static_cast<std::uint16_t>(first_ + entry.item), entry.free_at); });
    }
  }

 private:
  static constexpr std::uint32_t kNoBlock = ~std::uint32_t{0};
  using Slot = std::uint16_t;  // port - first

  enum class BlockState : std::uint8_t { free, held, quarantined };
  struct Block {
    std::uint32_t owner = 0;  // network order, while held
    std::uint32_t prev = kNoBlock, next = kNoBlock;  // the owner's other held blocks
    std::uint32_t in_use = 0;                         // its ports in use, every protocol
    std::uint32_t free_position = 0;                  // its place in free_blocks_ while free
    BlockState state = BlockState::free;
  };

  std::uint16_t first_port_of(std::uint32_t block) const { return static_cast<std::uint16_t>(first_ + block * block_size_); }
  std::uint16_t last_port_of(std::uint32_t block) const;
  std::uint32_t block_of(Slot slot) const { return slot / block_size_; }
  // The block starting at `port`, or kNoBlock.
  std::uint32_t block_at(std::uint16_t port) const;
  bool is_free(unsigned protocol, Slot slot) const { return (free_words_[protocol][slot / 64] >> (slot % 64)) & 1u; }
  void add_free(unsigned protocol, Slot slot);
  void take_free(unsigned protocol, Slot slot);
  // The free slot of rank r (0-based, r < free count of the protocol in the block) in `block`.
  Slot nth_free(unsigned protocol, std::uint32_t block, std::size_t r) const;
  Slot draw(unsigned protocol, std::uint32_t block);
  std::uint16_t take(unsigned protocol, Slot slot, std::uint32_t holder);
  void end_quarantines(Nanos now);
  // A free block to `subscriber`, linked first among its blocks, out of the free set.
  void hold(std::uint32_t block, std::uint32_t subscriber);
  void give_back(std::uint32_t block, Nanos now);
  void add_free_block(std::uint32_t block);
  void take_free_block(std::uint32_t block);
  PortBlockRecord record_of(std::uint32_t block, std::uint32_t owner, PortBlockRecord::Event event, Nanos now) const;

  std::uint32_t public_addr_;
  std::uint16_t first_, last_, block_size_;
  Nanos quarantine_;
  std::vector<Block> blocks_;
  std::array<std::vector<std::uint32_t>, kProtocols> holders_;       // by slot: the holder, else kNoHolder
  std::array<std::vector<std::uint64_t>, kProtocols> free_words_;    // bit s % 64 of word s / 64: slot s is free
  std::array<std::vector<std::uint16_t>, kProtocols> free_in_block_;  // free slots of each block
  std::array<QuarantineQueue<Slot>, kProtocols> port_quarantine_;
  std::vector<std::uint32_t> free_blocks_;  // the free blocks, in no order (draws pick a position)
  QuarantineQueue<std::uint32_t> block_quarantine_;
  absl::flat_hash_map<std::uint32_t, std::uint32_t> first_block_of_;  // subscriber -> its first held block
  std::size_t held_ = 0, in_use_ = 0;
  PortBlockLog* log_ = nullptr;
  Random rng_;
};

}  // namespace flowtrack
