#include "flowtrack/runtime/layer2.hpp"

#include <algorithm>
#include <cstring>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {
namespace {

// ARP for IPv4 over Ethernet (RFC 826), after the Ethernet header: hardware type 1, protocol 0x0800,
// address lengths 6 and 4, operation, sender MAC and IP, target MAC and IP.
constexpr std::size_t kArpSize = 28;
constexpr std::size_t kOperation = 6, kSenderMac = 8, kSenderIp = 14, kTargetMac = 18, kTargetIp = 24;

}  // namespace

std::optional<ArpMessage> parse_arp(std::span<const std::uint8_t> frame) {
  if (frame.size() < kEthernetHeaderSize + kArpSize || load_be16(frame.data() + kEtherTypeOffset) != kEtherTypeArp) {
    return std::nullopt;
  }
  const std::uint8_t* a = frame.data() + kEthernetHeaderSize;
  if (load_be16(a) != 1 || load_be16(a + 2) != kEtherTypeIpv4 || a[4] != 6 || a[5] != 4) return std::nullopt;
  ArpMessage m;
  m.operation = load_be16(a + kOperation);
  if (m.operation != ArpMessage::kRequest && m.operation != ArpMessage::kReply) return std::nullopt;
  std::memcpy(m.sender_mac.data(), a + kSenderMac, 6);
  std::memcpy(&m.sender_ip, a + kSenderIp, 4);
  std::memcpy(m.target_mac.data(), a + kTargetMac, 6);
  std::memcpy(&m.target_ip, a + kTargetIp, 4);
  return m;
}

std::size_t write_arp(std::span<std::uint8_t> out, const MacAddress& destination, const MacAddress& source,
                      const ArpMessage& m) {
  std::uint8_t* f = out.data();
  std::memset(f, 0, kArpFrameSize);
  std::memcpy(f, destination.data(), 6);
  std::memcpy(f + kEthernetSourceOffset, source.data(), 6);
  store_be16(f + kEtherTypeOffset, kEtherTypeArp);
  std::uint8_t* a = f + kEthernetHeaderSize;
  store_be16(a, 1);
  store_be16(a + 2, kEtherTypeIpv4);
  a[4] = 6;
  a[5] = 4;
  store_be16(a + kOperation, m.operation);
  std::memcpy(a + kSenderMac, m.sender_mac.data(), 6);
  std::memcpy(a + kSenderIp, &m.sender_ip, 4);
  std::memcpy(a + kTargetMac, m.target_mac.data(), 6);
  std::memcpy(a + kTargetIp, &m.target_ip, 4);
  return kArpFrameSize;
}

Layer2::Layer2(std::vector<Layer2Port> ports, std::vector<std::uint32_t> owned) : ports_(std::move(ports)), owned_(std::move(owned)) {
  gateway_port_ = static_cast<std::uint16_t>(ports_.size());
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    const std::uint8_t length = ports_[p].prefix_length;
    const std::uint32_t mask = to_network32(length == 0 ? 0 : ~std::uint32_t{0} << (32 - length));
    networks_.push_back({ports_[p].address & mask, mask});
    if (ports_[p].gateway != 0 && gateway_port_ == ports_.size()) gateway_port_ = p;
  }
}

bool Layer2::owns(std::uint16_t port, std::uint32_t address) const {
  return ports_[port].address == address || std::ranges::find(owned_, address) != owned_.end();
}

std::optional<ArpMessage> Layer2::on_arp(std::uint16_t port, const ArpMessage& m, Nanos now) {
  const bool for_us = owns(port, m.target_ip);
  const auto known = neighbours_.find(m.sender_ip);
  // A sender that asks for one of our addresses is about to talk to us: learn it now (as Linux does),
  // so the answer to what it sends needs no request of ours. A configured MAC stays as configured.
  if (m.sender_ip != 0 && (for_us || known != neighbours_.end())) {
    Neighbour& n = known != neighbours_.end() ? known->second : neighbours_[m.sender_ip];
    if (!n.configured) {
      n.mac = m.sender_mac;
      n.known = true;
      n.learnt = now;
      ++generation_;
    }
  }
  if (m.operation != ArpMessage::kRequest || !for_us) return std::nullopt;
  return ArpMessage{ArpMessage::kReply, ports_[port].mac, m.target_ip, m.sender_mac, m.sender_ip};
}

void Layer2::configure_neighbour(std::uint32_t address, const MacAddress& mac) {
  neighbours_[address] = Neighbour{.mac = mac, .known = true, .configured = true};
  ++generation_;
}

bool Layer2::should_ask(std::uint32_t address, Nanos now) {
  const auto [it, inserted] = neighbours_.try_emplace(address);
  if (inserted) ++generation_;
  Neighbour& n = it->second;
  if (n.configured) return false;
  const bool due = n.known ? now - std::max(n.learnt, n.ever_asked ? n.asked : 0) >= kRefreshInterval
                           : !n.ever_asked || now - n.asked >= kAskInterval;
  if (due) {
    n.asked = now;
    n.ever_asked = true;
  }
  return due;
}

ArpMessage Layer2::request(std::uint16_t port, std::uint32_t address) const {
  return ArpMessage{ArpMessage::kRequest, ports_[port].mac, ports_[port].address, MacAddress{}, address};
}

std::vector<ArpMessage> Layer2::announcements(std::uint16_t port) const {
  const auto announcement = [&](std::uint32_t address) { return ArpMessage{ArpMessage::kRequest, ports_[port].mac, address, MacAddress{}, address}; };
  std::vector<ArpMessage> out{announcement(ports_[port].address)};
  for (const std::uint32_t address : owned_) {
    if (address != ports_[port].address) out.push_back(announcement(address));
  }
  return out;
}

}  // namespace flowtrack
