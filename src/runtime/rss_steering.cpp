#include "flowtrack/runtime/rss_steering.hpp"

#include <absl/container/flat_hash_set.h>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

RssSteering::RssSteering(unsigned queues, std::span<const std::uint8_t> key) : hasher_(key), reta_(queues) {}

unsigned RssSteering::queue_of(std::span<const std::uint8_t> frame, LinkType link) const {
  ParsedPacket parsed;
  if (parse_frame(frame, link, parsed) != ParseStatus::ok) return 0;
  return queue_of_hash(hash_of(parsed));
}

std::uint32_t RssSteering::hash_of(const ParsedPacket& parsed) const {
  const bool with_ports = parsed.has_ports && !parsed.is_fragment;
  return parsed.ip_version == 4 ? hasher_.hash(parsed.key4, with_ports) : hasher_.hash(parsed.key6, with_ports);
}

PacketPartition partition_by_rss(const PacketStore& store, const RssSteering& steering) {
  PacketPartition partition;
  partition.packets.resize(steering.queues());
  std::vector<absl::flat_hash_set<FlowKeyV4, FlowKeyHasher>> flows(steering.queues());
  for (std::size_t i = 0; i < store.size(); ++i) {
    const PacketView packet = store[i];
    const unsigned queue = steering.queue_of(packet.bytes, store.link_type());
    partition.packets[queue].push_back(static_cast<std::uint32_t>(i));
    ParsedPacket parsed;
    if (parse_frame(packet.bytes, store.link_type(), parsed) == ParseStatus::ok && parsed.ip_version == 4) {
      flows[queue].insert(parsed.key4);
    }
  }
  for (const auto& set : flows) partition.ipv4_flows.push_back(set.size());
  return partition;
}

}  // namespace flowtrack
