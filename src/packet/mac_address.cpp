#include "flowtrack/packet/mac_address.hpp"

#include <fmt/format.h>

#include <charconv>

namespace flowtrack {

std::optional<MacAddress> parse_mac(std::string_view text) {
  // "xx:xx:xx:xx:xx:xx": 17 characters, a separator after every byte but the last.
  if (text.size() != 17) return std::nullopt;
  MacAddress mac{};
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const char* first = text.data() + 3 * i;
    if (i + 1 < mac.size() && first[2] != ':' && first[2] != '-') return std::nullopt;
    const auto [end, error] = std::from_chars(first, first + 2, mac[i], 16);
    if (error != std::errc{} || end != first + 2) return std::nullopt;
  }
  return mac;
}

std::string mac_to_string(const MacAddress& mac) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

}  // namespace flowtrack
