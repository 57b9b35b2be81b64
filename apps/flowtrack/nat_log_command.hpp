// `flowtrack nat-log who PUBLIC_ADDRESS:PORT TIME --log FILE...`: which inside address held a public
// address and port at a time, from the NAT's port-block journals (runtime/port_block_lookup.hpp).
#pragma once

#include <string>
#include <vector>

namespace flowtrack::cli {

struct NatLogWhoOptions {
  std::string endpoint;           // "203.0.113.1:40000"
  std::string time;               // RFC 3339 in UTC, or seconds since the Unix epoch
  std::vector<std::string> logs;  // journal files, read together (rotated files, both NATs of a pair)
  bool json = false;
};

// Prints the answer (also when nobody held it). Throws UserError for a bad endpoint or time, or a log
// that cannot be read; a malformed line is skipped with a warning on stderr.
void nat_log_who_command(const NatLogWhoOptions& o);

}  // namespace flowtrack::cli
