#include "flowtrack/sched/header_trace.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "flowtrack/hash/crc16.hpp"
#include "flowtrack/hash/toeplitz.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {
namespace {

// A key of either family as words, the IP version in the last word so that the families never meet.
using InternKey = std::array<std::uint64_t, 6>;

template <class Key>
InternKey intern_key(const Key& key, std::uint64_t version) {
  InternKey words{};
  std::memcpy(words.data(), &key, sizeof(Key));
  words[5] = version;
  return words;
}

}  // namespace

HeaderTrace extract_headers(const PacketStore& store) {
  HeaderTrace trace;
  trace.flow_of_packet.reserve(store.size());
  trace.bytes_of_packet.reserve(store.size());
  absl::flat_hash_map<InternKey, std::uint32_t> flow_ids;
  const ToeplitzHasher toeplitz(kMicrosoftRssKey);
  ParsedPacket parsed;
  for (std::size_t i = 0; i < store.size(); ++i) {
    const PacketView packet = store[i];
    if (parse_frame(packet.bytes, store.link_type(), parsed) != ParseStatus::ok) {
      ++trace.skipped;
      continue;
    }
    const bool v4 = parsed.ip_version == 4;
    const InternKey key = v4 ? intern_key(parsed.key4, 4) : intern_key(parsed.key6, 6);
    const auto [it, inserted] = flow_ids.try_emplace(key, static_cast<std::uint32_t>(trace.flows()));
    if (inserted) {
      trace.crc16_of_flow.push_back(v4 ? crc16_flow(parsed.key4) : crc16_flow(parsed.key6));
      trace.rss_hash_of_flow.push_back(v4 ? toeplitz.hash(parsed.key4, parsed.has_ports)
                                          : toeplitz.hash(parsed.key6, parsed.has_ports));
    }
    trace.flow_of_packet.push_back(it->second);
    trace.bytes_of_packet.push_back(static_cast<std::uint16_t>(std::min<std::uint32_t>(packet.wire_length, 65535)));
  }
  if (trace.packets() == 0) throw std::invalid_argument("no packet of the trace parses as IP");
  return trace;
}

}  // namespace flowtrack
