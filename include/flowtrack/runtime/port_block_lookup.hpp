// "Who held PUBLIC_ADDRESS:PORT at TIME?" (RFC 6888 REQ-12), answered from the NAT's port-block journal
// (port_block_journal.hpp): the subscriber whose block of that public address covered the port at that
// time, for any protocol, with the time it got the block and the time it gave it back.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "flowtrack/nf/port_block_journal.hpp"

namespace flowtrack {

struct PortBlockHolding {
  std::uint32_t inside_addr = 0, public_addr = 0;  // network order
  std::uint16_t first_port = 0, last_port = 0;
  std::int64_t from_ns = 0;                 // the block's allocation
  std::optional<std::int64_t> until_ns;     // its release, when the journal has it

  bool operator==(const PortBlockHolding&) const = default;
};

// The holding of `port` of `public_addr` (network order) at `unix_ns`, from entries in any order: the
// latest allocation of a block covering it at or before that time, unless the same subscriber released
// that block at or before that time. Nothing when no block covered it then.
std::optional<PortBlockHolding> who_held(std::span<const PortBlockEntry> entries, std::uint32_t public_addr, std::uint16_t port,
                                         std::int64_t unix_ns);

// A journal file read: its entries, and one problem per line that is not an entry ("LINE: reason"),
// which is skipped (a log cut short by a crash ends in half a line). Throws std::runtime_error naming
// the file when it cannot be read.
struct PortBlockJournal {
  std::vector<PortBlockEntry> entries;
  std::vector<std::string> problems;
};
PortBlockJournal read_port_block_journal(const std::string& path);

}  // namespace flowtrack
