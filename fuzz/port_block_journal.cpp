// libFuzzer target: arbitrary bytes as a line of the NAT's port-block journal (nf/port_block_journal.hpp),
// which `flowtrack nat-log who` reads from files it did not write itself. Every input is an entry or an
// error saying why not, never a crash; an entry written back out reads back the same, and any time the
// reader accepts prints as a time it accepts again.
#include <cstdint>
#include <string>
#include <string_view>

#include "flowtrack/nf/port_block_journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowtrack;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto entry = parse_port_block_journal_line(line, error);
  if (!entry) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  std::string again_error;
  const auto again = parse_port_block_journal_line(port_block_journal_line(*entry), again_error);
  if (!again || !(*again == *entry)) __builtin_trap();
  if (const auto t = parse_utc_time(line); t && parse_utc_time(format_utc_time(*t)) != t) __builtin_trap();
  return 0;
}
