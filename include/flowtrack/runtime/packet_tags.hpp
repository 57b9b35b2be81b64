// What a live dispatcher knows of each packet before it picks a worker (`run --dispatch`,
// runtime/worker_picker.hpp), computed before the run from the packets as captured, as the RSS
// partition is (rss_steering.hpp): a NIC hands the dispatcher core the RSS hash in each receive
// descriptor, and the connection's identity and CRC-16 stand for the few instructions LAPS's hardware
// spends on the 5-tuple.
//
// The connection is both directions of a 5-tuple: its identity and its CRC-16 are taken over the
// canonical key (the direction whose source endpoint, address then port, is the smaller), so LAPS keeps
// a connection's two directions on one worker as the symmetric RSS key does, and a migration moves them
// together. `flow` is the directed 5-tuple, the unit whose packet order the reordering count checks
// (reordering.hpp), as in the simulator.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/io/packet_store.hpp"

namespace flowtrack {

class RssSteering;

struct PacketTag {
  std::uint64_t connection = 0;  // 64-bit hash of the canonical key; never ~0 (the schedulers' empty mark)
  std::uint64_t flow = 0;        // 64-bit hash of the directed key
  std::uint32_t rss_hash = 0;    // steering.hash_of(): the symmetric Toeplitz hash
  std::uint16_t crc16 = 0;       // crc16_flow of the canonical key
  bool ip = false;               // the packet parses as IP; the others have only their index
};

std::vector<PacketTag> tag_packets(const PacketStore& store, const RssSteering& steering);

}  // namespace flowtrack
