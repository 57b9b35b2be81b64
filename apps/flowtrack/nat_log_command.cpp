#include "nat_log_command.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>

#include "flowtrack/packet/flow_key.hpp"
#include "flowtrack/runtime/port_block_lookup.hpp"
#include "json_line.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

// TIME: RFC 3339 in UTC, or a number of seconds since the Unix epoch (fractions allowed).
std::int64_t parse_time_argument(const std::string& text) {
  if (const auto utc = parse_utc_time(text)) return *utc;
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) || seconds < 0 || seconds > 9e9) {
    throw UserError(fmt::format("nat-log: time '{}': expected RFC 3339 in UTC (2026-11-28T09:30:00Z) or seconds since the epoch",
                                text));
  }
  return static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

std::pair<std::uint32_t, std::uint16_t> parse_endpoint(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  in_addr address{};
  unsigned port = 0;
  if (colon != std::string::npos) {
    const auto [end, ec] = std::from_chars(text.data() + colon + 1, text.data() + text.size(), port);
    if (ec == std::errc() && end == text.data() + text.size() && port >= 1 && port <= 65535 &&
        inet_pton(AF_INET, text.substr(0, colon).c_str(), &address) == 1) {
      return {address.s_addr, static_cast<std::uint16_t>(port)};
    }
  }
  throw UserError(fmt::format("nat-log: '{}': expected PUBLIC_ADDRESS:PORT (203.0.113.1:40000)", text));
}

}  // namespace

void nat_log_who_command(const NatLogWhoOptions& o) {
  const auto [public_addr, port] = parse_endpoint(o.endpoint);
  const std::int64_t at = parse_time_argument(o.time);
  std::vector<PortBlockEntry> entries;
  std::size_t skipped = 0;
  for (const std::string& path : o.logs) {
    PortBlockJournal journal;
    try {
      journal = read_port_block_journal(path);
    } catch (const std::runtime_error& e) {
      throw UserError(fmt::format("nat-log: {}", e.what()));
    }
    for (const std::string& problem : journal.problems) fmt::print(stderr, "nat-log: {}:{} (line skipped)\n", path, problem);
    skipped += journal.problems.size();
    entries.insert(entries.end(), journal.entries.begin(), journal.entries.end());
  }
  const std::optional<PortBlockHolding> held = who_held(entries, public_addr, port, at);
  if (o.json) {
    JsonObject j;
    j.set("public", ipv4_to_string(public_addr)).set("port", port).set("time", format_utc_time(at)).set("skipped_lines", skipped);
    if (held) {
      j.set("inside", ipv4_to_string(held->inside_addr))
          .set("ports", std::vector<std::uint64_t>{held->first_port, held->last_port})
          .set("allocated", format_utc_time(held->from_ns));
      if (held->until_ns) j.set("released", format_utc_time(*held->until_ns));
    }
    j.print_line();
    return;
  }
  const std::string what = fmt::format("{}:{} at {}", ipv4_to_string(public_addr), port, format_utc_time(at));
  if (!held) {
    fmt::print("{}: no inside address held it\n", what);
    return;
  }
  fmt::print("{}: {} (block {}-{}, allocated {}, {})\n", what, ipv4_to_string(held->inside_addr), held->first_port, held->last_port,
             format_utc_time(held->from_ns), held->until_ns ? "released " + format_utc_time(*held->until_ns) : std::string("not released in the log"));
}

}  // namespace flowtrack::cli
