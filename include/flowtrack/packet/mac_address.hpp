// Ethernet (MAC) addresses: the type, its text form ("02:00:00:00:00:01") and the offsets of the
// Ethernet II header's fields, for the live data plane's layer 2 (runtime/layer2.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flowtrack {

using MacAddress = std::array<std::uint8_t, 6>;

inline constexpr std::size_t kEthernetHeaderSize = 14;  // destination, source, EtherType
inline constexpr std::size_t kEthernetSourceOffset = 6;
inline constexpr std::size_t kEtherTypeOffset = 12;
inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeArp = 0x0806;
inline constexpr MacAddress kBroadcastMac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// Six hexadecimal bytes separated by ':' (or '-'); nullopt for anything else.
std::optional<MacAddress> parse_mac(std::string_view text);
std::string mac_to_string(const MacAddress& mac);

}  // namespace flowtrack
