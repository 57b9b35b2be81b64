#include "flowtrack/io/trace_stats.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstring>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {
namespace {

struct FlowRecord {
  std::uint64_t first_ns = 0;
  std::uint64_t last_ns = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
};

// One direction-independent name per connection: the smaller of the key and its reverse, by bytes.
template <class Key>
Key canonical(const Key& key) {
  const Key reverse = key.reversed();
  return std::memcmp(&key, &reverse, sizeof(Key)) <= 0 ? key : reverse;
}

template <class Key>
struct FlowSet {
  struct Entry {
    FlowRecord record;
    Key first_direction;
  };
  absl::flat_hash_map<Key, Entry, FlowKeyHasher> flows;

  void add(const Key& key, std::uint64_t ts, std::uint32_t bytes) {
    auto [it, inserted] = flows.try_emplace(canonical(key));
    if (inserted) {
      it->second.record.first_ns = ts;
      it->second.first_direction = key;
    }
    it->second.record.last_ns = std::max(it->second.record.last_ns, ts);
    it->second.record.packets += 1;
    it->second.record.bytes += bytes;
  }
};

}  // namespace

TraceStats compute_trace_stats(const PacketStore& trace, std::size_t top_flows, std::size_t samples) {
  TraceStats stats;
  FlowSet<FlowKeyV4> v4;
  FlowSet<FlowKeyV6> v6;
  ParsedPacket packet;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const PacketView view = trace[i];
    stats.packets += 1;
    stats.bytes += view.wire_length;
    const ParseStatus status = parse_frame(view.bytes, trace.link_type(), packet);
    if (status != ParseStatus::ok) {
      stats.parse_failures[std::string(parse_status_name(status))] += 1;
      continue;
    }
    stats.packets_by_protocol[protocol_name(packet.protocol())] += 1;
    if (packet.is_fragment && packet.fragment_offset != 0) {
      stats.non_first_fragments += 1;
      continue;
    }
    if (packet.ip_version == 4) {
      stats.ipv4_packets += 1;
      v4.add(packet.key4, view.timestamp_ns, view.wire_length);
    } else {
      stats.ipv6_packets += 1;
      v6.add(packet.key6, view.timestamp_ns, view.wire_length);
    }
  }
  stats.flows = v4.flows.size() + v6.flows.size();
  stats.duration_s = static_cast<double>(trace.duration_ns()) / 1e9;

  // Lifetimes as +1/-1 events; a flow ending at t and another starting at t do not overlap.
  std::vector<std::pair<std::uint64_t, int>> changes;
  changes.reserve(2 * stats.flows);
  std::vector<TraceStats::TopFlow> all;
  auto collect = [&](const auto& set) {
    for (const auto& [key, entry] : set.flows) {
      changes.emplace_back(entry.record.first_ns, +1);
      changes.emplace_back(entry.record.last_ns + 1, -1);
      stats.flows_by_protocol[protocol_name(key.protocol)] += 1;
      all.push_back({entry.first_direction.to_string(), entry.record.packets, entry.record.bytes});
    }
  };
  collect(v4);
  collect(v6);
  std::sort(changes.begin(), changes.end());

  const std::uint64_t origin = trace.empty() ? 0 : trace.records().front().timestamp_ns;
  const std::uint64_t span = trace.duration_ns();
  // Samples at evenly spaced times over the trace, each counting the flows alive at that time.
  const std::size_t intervals = std::max<std::size_t>(samples, 2) - 1;
  auto sample_time = [&](std::size_t k) { return span * k / intervals; };
  std::size_t next_sample = 0;
  std::int64_t alive = 0;
  auto emit_samples_before = [&](std::uint64_t time) {
    for (; next_sample < samples && origin + sample_time(next_sample) < time; ++next_sample) {
      stats.concurrency.push_back({static_cast<double>(sample_time(next_sample)) / 1e9, static_cast<std::uint64_t>(alive)});
    }
  };
  for (const auto& [time, change] : changes) {
    emit_samples_before(time);
    alive += change;
    stats.max_concurrent_flows = std::max(stats.max_concurrent_flows, static_cast<std::uint64_t>(alive));
  }
  emit_samples_before(~std::uint64_t{0});

  const std::size_t keep = std::min(top_flows, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                    [](const TraceStats::TopFlow& a, const TraceStats::TopFlow& b) {
                      return a.packets != b.packets ? a.packets > b.packets : a.key < b.key;
                    });
  all.resize(keep);
  stats.top_flows = std::move(all);
  return stats;
}

}  // namespace flowtrack
