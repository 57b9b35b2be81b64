#include "flowtrack/nf/port_block_journal.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <ctime>
#include <nlohmann/json.hpp>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {
namespace {

constexpr std::int64_t kNanosPerSecondSigned = 1'000'000'000;

std::string_view event_name(PortBlockRecord::Event event) {
  return event == PortBlockRecord::Event::allocated ? "allocated" : "released";
}

std::optional<std::uint32_t> parse_address(const std::string& text) {
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) return std::nullopt;
  return parsed.s_addr;
}

// The digits of text[at, at + n) as a number, or -1.
int digits_at(std::string_view text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return -1;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + n, value);
  return ec == std::errc() && end == text.data() + at + n ? value : -1;
}

}  // namespace

PortBlockEntry port_block_entry(const PortBlockRecord& record, std::int64_t unix_offset_ns) {
  return {.unix_ns = static_cast<std::int64_t>(record.time) + unix_offset_ns,
          .event = record.event,
          .inside_addr = record.inside_addr,
          .public_addr = record.public_addr,
          .first_port = record.first_port,
          .last_port = record.last_port};
}

std::string format_utc_time(std::int64_t unix_ns) {
  std::int64_t seconds = unix_ns / kNanosPerSecondSigned;
  std::int64_t nanos = unix_ns % kNanosPerSecondSigned;
  if (nanos < 0) {
    nanos += kNanosPerSecondSigned;
    --seconds;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                     utc.tm_min, utc.tm_sec, nanos);
}

std::optional<std::int64_t> parse_utc_time(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':' || (text.back() != 'Z' && text.back() != 'z')) {
    return std::nullopt;
  }
  std::tm utc{};
  const int fields[6] = {digits_at(text, 0, 4), digits_at(text, 5, 2),  digits_at(text, 8, 2),
                         digits_at(text, 11, 2), digits_at(text, 14, 2), digits_at(text, 17, 2)};
  for (const int f : fields) {
    if (f < 0) return std::nullopt;
  }
  if (fields[1] < 1 || fields[1] > 12 || fields[2] < 1 || fields[2] > 31 || fields[3] > 23 || fields[4] > 59 || fields[5] > 60) {
    return std::nullopt;
  }
  utc.tm_year = fields[0] - 1900;
  utc.tm_mon = fields[1] - 1;
  utc.tm_mday = fields[2];
  utc.tm_hour = fields[3];
  utc.tm_min = fields[4];
  utc.tm_sec = fields[5];
  std::int64_t nanos = 0;
  const std::string_view rest = text.substr(19, text.size() - 20);  // between the seconds and the Z
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    const int digits = digits_at(rest, 1, rest.size() - 1);
    if (digits < 0) return std::nullopt;
    nanos = digits;
    for (std::size_t scale = rest.size() - 1; scale < 9; ++scale) nanos *= 10;
  }
  const std::time_t seconds = timegm(&utc);
  // Nanoseconds since the epoch fit 64 bits from 1677 to 2262.
  constexpr std::int64_t kMaxSeconds = INT64_MAX / kNanosPerSecondSigned - 1;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds) return std::nullopt;
  return static_cast<std::int64_t>(seconds) * kNanosPerSecondSigned + nanos;
}

std::string port_block_journal_line(const PortBlockEntry& e) {
  return fmt::format(R"({{"time":"{}","event":"{}","inside":"{}","public":"{}","ports":[{},{}]}})", format_utc_time(e.unix_ns),
                     event_name(e.event), ipv4_to_string(e.inside_addr), ipv4_to_string(e.public_addr), e.first_port, e.last_port);
}

std::optional<PortBlockEntry> parse_port_block_journal_line(std::string_view line, std::string& error) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  for (const char* key : {"time", "event", "inside", "public"}) {
    if (!j.contains(key) || !j[key].is_string()) {
      error = fmt::format("'{}': expected a string", key);
      return std::nullopt;
    }
  }
  if (j.size() != 5 || !j.contains("ports")) {
    error = "expected the fields time, event, inside, public and ports, and no other";
    return std::nullopt;
  }
  const nlohmann::json& ports = j["ports"];
  if (!ports.is_array() || ports.size() != 2 || !ports[0].is_number_unsigned() || !ports[1].is_number_unsigned() ||
      ports[0].get<std::uint64_t>() < 1 || ports[1].get<std::uint64_t>() > 65535 ||
      ports[0].get<std::uint64_t>() > ports[1].get<std::uint64_t>()) {
    error = "'ports': expected [first, last] with 1 <= first <= last <= 65535";
    return std::nullopt;
  }
  PortBlockEntry e;
  e.first_port = static_cast<std::uint16_t>(ports[0].get<std::uint64_t>());
  e.last_port = static_cast<std::uint16_t>(ports[1].get<std::uint64_t>());
  const std::string event = j["event"].get<std::string>();
  if (event == "allocated") {
    e.event = PortBlockRecord::Event::allocated;
  } else if (event == "released") {
    e.event = PortBlockRecord::Event::released;
  } else {
    error = "'event': expected \"allocated\" or \"released\"";
    return std::nullopt;
  }
  const std::optional<std::int64_t> time = parse_utc_time(j["time"].get<std::string>());
  const std::optional<std::uint32_t> inside = parse_address(j["inside"].get<std::string>());
  const std::optional<std::uint32_t> public_addr = parse_address(j["public"].get<std::string>());
  if (!time || !inside || !public_addr) {
    error = !time ? "'time': expected an RFC 3339 time in UTC" : "'inside' and 'public': expected IPv4 addresses";
    return std::nullopt;
  }
  e.unix_ns = *time;
  e.inside_addr = *inside;
  e.public_addr = *public_addr;
  return e;
}

}  // namespace flowtrack
