// The live data plane's layer 2 and its one-hop routing, with no DPDK in it (runtime/dpdk_ports.hpp
// drives it), so that it is tested on plain byte arrays:
//  - ARP for IPv4 over Ethernet: messages read from and written into frames;
//  - the addresses the function owns: each port answers ARP requests for its own address and for the
//    function's addresses (VIPs, NAT pool addresses: owned on every port);
//  - neighbours: a next hop's MAC is learnt from ARP (an answer to our request, or a request that asks
//    for one of our addresses, as Linux does) or configured; learnt entries are asked again every
//    kRefreshInterval so a moved host is followed; a request for an unknown next hop goes out at most
//    once per kAskInterval;
//  - routing: a destination on a port's network leaves by that port to itself; any other leaves by the
//    first port with a gateway, to that gateway; none: no route.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/packet/mac_address.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

struct ArpMessage {
  static constexpr std::uint16_t kRequest = 1;
  static constexpr std::uint16_t kReply = 2;

  std::uint16_t operation = kRequest;
  MacAddress sender_mac{};
  std::uint32_t sender_ip = 0;  // network order
  MacAddress target_mac{};
  std::uint32_t target_ip = 0;  // network order
};

// An ARP frame is padded to Ethernet's minimum frame (without its check sequence).
inline constexpr std::size_t kArpFrameSize = 60;

// The ARP message (IPv4 over Ethernet, request or reply) in an untagged Ethernet frame; nullopt for any
// other frame or a malformed one.
std::optional<ArpMessage> parse_arp(std::span<const std::uint8_t> frame);

// Writes `message` as a frame from `source` to `destination` into `out` (at least kArpFrameSize bytes);
// returns kArpFrameSize.
std::size_t write_arp(std::span<std::uint8_t> out, const MacAddress& destination, const MacAddress& source,
                      const ArpMessage& message);

struct Layer2Port {
  MacAddress mac{};
  std::uint32_t address = 0;  // network order
  std::uint8_t prefix_length = 24;
  std::uint32_t gateway = 0;  // network order; 0: none
};

struct Egress {
  std::uint16_t port = 0;
  std::uint32_t next_hop = 0;  // network order
};

class Layer2 {
 public:
  static constexpr Nanos kAskInterval = 200 * kNanosPerMilli;
  static constexpr Nanos kRefreshInterval = 30 * kNanosPerSecond;

  Layer2() = default;
  // `owned`: the function's addresses (network order), answered on every port.
  Layer2(std::vector<Layer2Port> ports, std::vector<std::uint32_t> owned);

  const std::vector<Layer2Port>& ports() const { return ports_; }
  bool owns(std::uint16_t port, std::uint32_t address) const;

  // An ARP message that came in on `port`, at `now`: learns its sender when the message is for us (or
  // the sender is a neighbour already known); for a request for an address `port` owns, returns the
  // reply to send back out of `port`.
  std::optional<ArpMessage> on_arp(std::uint16_t port, const ArpMessage& message, Nanos now);

  // Per packet: the masks are kept in network order, so a destination is compared as it is on the wire.
  std::optional<Egress> route(std::uint32_t destination) const {
    for (std::uint16_t p = 0; p < networks_.size(); ++p) {
      if ((destination & networks_[p].mask) == networks_[p].network) return Egress{p, destination};
    }
    if (gateway_port_ < ports_.size()) return Egress{gateway_port_, ports_[gateway_port_].gateway};
    return std::nullopt;
  }

  // The MAC of a neighbour, if known (learnt or configured). Per packet: the last answer is kept, and
  // dropped whenever any neighbour changes (`generation_`).
  const MacAddress* neighbour(std::uint32_t address) const {
    if (address != last_address_ || generation_ != last_generation_) {
      const auto it = neighbours_.find(address);
      last_mac_ = it != neighbours_.end() && it->second.known ? &it->second.mac : nullptr;
      last_address_ = address;
      last_generation_ = generation_;
    }
    return last_mac_;
  }
  // A configured neighbour: never asked for, never forgotten.
  void configure_neighbour(std::uint32_t address, const MacAddress& mac);

  // Whether to ask for `address` now: it is unknown and was not asked for in the last kAskInterval, or
  // learnt more than kRefreshInterval ago and not asked since. Marks it asked when it answers yes.
  bool should_ask(std::uint32_t address, Nanos now);
  // The request for `address` from `port` (to send to the broadcast address).
  ArpMessage request(std::uint16_t port, std::uint32_t address) const;
  // Gratuitous ARP: for each address `port` answers for (its own, then the function's), a request from
  // the port's MAC whose sender and target are that address (to send to the broadcast address). A
  // neighbour that holds the address moves it to this MAC, and a switch learns where the MAC is.
  std::vector<ArpMessage> announcements(std::uint16_t port) const;

 private:
  struct Neighbour {
    MacAddress mac{};
    bool known = false;
    bool configured = false;
    Nanos learnt = 0;
    Nanos asked = 0;
    bool ever_asked = false;
  };

  struct Network {
    std::uint32_t network, mask;  // network order
  };

  std::vector<Layer2Port> ports_;
  std::vector<Network> networks_;  // by port
  std::uint16_t gateway_port_ = 0;  // the first port with a gateway; ports_.size() if none
  std::vector<std::uint32_t> owned_;
  absl::flat_hash_map<std::uint32_t, Neighbour> neighbours_;
  // Counts the changes of neighbours_ (a MAC learnt or configured, an entry inserted, which may move the
  // others): neighbour()'s kept answer, a pointer into the map, is good while it is unchanged.
  std::uint64_t generation_ = 0;
  mutable std::uint32_t last_address_ = 0;
  mutable std::uint64_t last_generation_ = ~std::uint64_t{0};
  mutable const MacAddress* last_mac_ = nullptr;
};

}  // namespace flowtrack
