#include "flowtrack/runtime/packet_tags.hpp"

#include <algorithm>
#include <cstring>

#include "flowtrack/hash/crc16.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/runtime/rss_steering.hpp"

namespace flowtrack {
namespace {

// Orders the endpoints as bytes (network order: the order of the addresses and ports as numbers).
template <class Key>
Key canonical(const Key& key) {
  const int by_addr = std::memcmp(&key.src_addr, &key.dst_addr, sizeof(key.src_addr));
  const bool swap = by_addr > 0 || (by_addr == 0 && std::memcmp(&key.src_port, &key.dst_port, sizeof(key.src_port)) > 0);
  return swap ? key.reversed() : key;
}

template <class Key>
std::uint64_t hash64(const Key& key) {
  return (std::uint64_t{flow_hash(key, 0)} << 32) | flow_hash(key, 0x9e3779b9u);
}

template <class Key>
void tag_key(const Key& key, PacketTag& tag) {
  const Key connection = canonical(key);
  tag.connection = std::min(hash64(connection), ~std::uint64_t{0} - 1);
  tag.flow = hash64(key);
  tag.crc16 = crc16_flow(connection);
}

}  // namespace

std::vector<PacketTag> tag_packets(const PacketStore& store, const RssSteering& steering) {
  std::vector<PacketTag> tags(store.size());
  ParsedPacket parsed;
  for (std::size_t i = 0; i < store.size(); ++i) {
    if (parse_frame(store[i].bytes, store.link_type(), parsed) != ParseStatus::ok) continue;
    PacketTag& tag = tags[i];
    tag.ip = true;
    tag.rss_hash = steering.hash_of(parsed);
    if (parsed.ip_version == 4) {
      tag_key(parsed.key4, tag);
    } else {
      tag_key(parsed.key6, tag);
    }
  }
  return tags;
}

}  // namespace flowtrack
