// Receive Side Scaling in software: which worker a packet goes to, as a NIC would decide it (Toeplitz
// hash of the tuple, then the redirection table).
//
// The tuple is the 4-tuple when the packet has ports and is not a fragment, else the address pair
// (what NICs do for fragments, so every fragment of a datagram lands together). The default key is the
// symmetric one, so both directions of a connection reach the same worker (what a NAT or a tracker that
// joins directions needs). Packets that do not parse as IP go to queue 0, like a NIC's default queue.
//
// "Hardware" steering partitions a whole trace before the run (partition_by_rss): each worker then reads
// only its own packets, as from its own NIC queue. "Software" steering runs queue_of() on a dispatcher
// core during the run (runtime/runner.hpp, and `run --dispatch rss`: runtime/worker_picker.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/hash/toeplitz.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/runtime/packet_tags.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

class RssSteering {
 public:
  explicit RssSteering(unsigned queues, std::span<const std::uint8_t> key = kSymmetricRssKey);

  unsigned queue_of(std::span<const std::uint8_t> frame, LinkType link) const;
  // The two halves of queue_of for a packet already parsed: the Toeplitz hash a NIC would put in the
  // receive descriptor, and the queue the redirection table gives it.
  std::uint32_t hash_of(const ParsedPacket& parsed) const;
  unsigned queue_of_hash(std::uint32_t hash) const { return reta_.queue(hash); }
  unsigned queues() const { return reta_.queues(); }

 private:
  ToeplitzHasher hasher_;
  RedirectionTable reta_;
};

struct PacketPartition {
  std::vector<std::vector<std::uint32_t>> packets;  // per queue: indices into the store, in trace order
  std::vector<std::size_t> ipv4_flows;              // per queue: distinct IPv4 keys (one per direction)
  // Per packet of the store, what a live dispatcher steers by (packet_tags.hpp); empty unless the run
  // dispatches (it is computed from the packets as captured, as the queues are).
  std::vector<PacketTag> tags;
};

PacketPartition partition_by_rss(const PacketStore& store, const RssSteering& steering);

}  // namespace flowtrack
