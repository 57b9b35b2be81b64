// The NAT's port-block log as a file: one JSON object per line, one line per block given to a subscriber
// or taken back (port_block_log.hpp makes the records, runtime/port_block_journal_writer.hpp writes them,
// runtime/port_block_lookup.hpp answers from them). A line:
//
//   {"time":"2026-11-28T09:30:00.250000000Z","event":"allocated","inside":"10.0.3.7",
//    "public":"203.0.113.1","ports":[40448,40959]}
//
// `time` is UTC, RFC 3339 with nanoseconds; `event` is "allocated" or "released"; `ports` the block's
// first and last port. The port range covers TCP, UDP and ICMP alike. Lines are appended in the order
// the control plane takes the records; records of one block are in time order (one worker makes them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flowtrack/nf/port_block_log.hpp"

namespace flowtrack {

// A record as the file holds it: its time in nanoseconds since the Unix epoch (UTC).
struct PortBlockEntry {
  std::int64_t unix_ns = 0;
  PortBlockRecord::Event event = PortBlockRecord::Event::allocated;
  std::uint32_t inside_addr = 0;  // network order
  std::uint32_t public_addr = 0;  // network order
  std::uint16_t first_port = 0, last_port = 0;

  bool operator==(const PortBlockEntry&) const = default;
};

// A record made at `record.time` on the NAT's clock, which reads `unix_offset_ns` less than the Unix
// clock (0 for a replay, whose clock is the trace's capture time).
PortBlockEntry port_block_entry(const PortBlockRecord& record, std::int64_t unix_offset_ns);

// The line of an entry, without its newline.
std::string port_block_journal_line(const PortBlockEntry& entry);

// The entry of a line, or nothing with the reason in `error`: a line that is not such an object (a
// missing or extra field, a wrong type, an address or a time that does not parse, ports out of order).
std::optional<PortBlockEntry> parse_port_block_journal_line(std::string_view line, std::string& error);

// UTC times as the journal writes them (RFC 3339, "Z", nanoseconds), and as it reads them: RFC 3339 in
// UTC ("Z") with 0 to 9 digits of fraction, between the years 1678 and 2261 (64-bit nanoseconds).
std::string format_utc_time(std::int64_t unix_ns);
std::optional<std::int64_t> parse_utc_time(std::string_view text);

}  // namespace flowtrack
