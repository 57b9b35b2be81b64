// A NAT instance's state as plain data (Nat44::snapshot, Nat44::restore): what a state file holds
// across a restart (state_file.hpp) and what the standby of a pair keeps of its active.
//
// Addresses and ports are in network order, as the NAT's flow keys hold them, but for the ports of
// blocks and quarantines, which are host order as the allocators count them. Times are what is left
// from the moment of the snapshot. The mappings a session names are indexes into `mappings`; the
// quarantines are in the order their ports and blocks become free (the order their queues keep).
// Fragments in flight are not part of it: they last seconds.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/conntrack/saved_connection.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

// How a restore treats a record that does not fit its instance: the whole snapshot refused, or the
// record left out.
enum class RestoreMode : std::uint8_t { whole, what_fits };

struct NatSnapshot {
  static constexpr std::uint32_t kNoMapping = ~std::uint32_t{0};

  struct Mapping {
    std::uint32_t inside_addr = 0, external_addr = 0;
    std::uint16_t inside_port = 0, external_port = 0;
    std::uint8_t protocol = 0;
    bool operator==(const Mapping&) const = default;
  };
  struct Session {
    SavedConnection<FlowKeyV4> connection;
    std::uint32_t mapping = kNoMapping;          // its inside endpoint's
    std::uint32_t hairpin_mapping = kNoMapping;  // a hairpinned session: its inside peer's
    bool operator==(const Session&) const = default;
  };
  struct Block {
    std::uint32_t subscriber = 0, public_addr = 0;
    std::uint16_t first_port = 0;  // host order
    bool operator==(const Block&) const = default;
  };
  struct QuarantinedPort {
    std::uint32_t public_addr = 0;
    std::uint16_t port = 0;  // host order
    std::uint8_t protocol = 0;
    Nanos remaining = 0;
    bool operator==(const QuarantinedPort&) const = default;
  };
  struct QuarantinedBlock {
    std::uint32_t public_addr = 0;
    std::uint16_t first_port = 0;  // host order
    Nanos remaining = 0;
    bool operator==(const QuarantinedBlock&) const = default;
  };

  std::vector<Mapping> mappings;
  std::vector<Session> sessions;
  std::vector<Block> blocks;                         // held
  std::vector<QuarantinedPort> quarantined_ports;    // per public address and protocol, the next free first
  std::vector<QuarantinedBlock> quarantined_blocks;  // per public address, the next free first

  bool operator==(const NatSnapshot&) const = default;
};

}  // namespace flowtrack
