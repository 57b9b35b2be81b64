#include "flowtrack/packet/flow_key.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

namespace flowtrack {

std::string ipv4_to_string(std::uint32_t network_order_addr) {
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &network_order_addr, text, sizeof(text));
  return text;
}

std::string ipv6_to_string(const std::array<std::uint8_t, 16>& addr) {
  char text[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, addr.data(), text, sizeof(text));
  return text;
}

std::string protocol_name(std::uint8_t protocol) {
  switch (protocol) {
    case ipproto::kTcp: return "tcp";
    case ipproto::kUdp: return "udp";
    case ipproto::kIcmp: return "icmp";
    case ipproto::kIcmpV6: return "icmpv6";
    default: return fmt::format("proto{}", protocol);
  }
}

std::string FlowKeyV4::to_string() const {
  return fmt::format("{}:{} -> {}:{} {}", ipv4_to_string(src_addr), to_host16(src_port), ipv4_to_string(dst_addr),
                     to_host16(dst_port), protocol_name(protocol));
}

std::string FlowKeyV6::to_string() const {
  return fmt::format("[{}]:{} -> [{}]:{} {}", ipv6_to_string(src_addr), to_host16(src_port), ipv6_to_string(dst_addr),
                     to_host16(dst_port), protocol_name(protocol));
}

}  // namespace flowtrack
