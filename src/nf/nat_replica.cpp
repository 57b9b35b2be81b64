#include "flowtrack/nf/nat_replica.hpp"

#include <absl/container/flat_hash_set.h>

#include <algorithm>

namespace flowtrack {
namespace {

Nanos left(Nanos at, Nanos now) { return at > now ? at - now : 0; }

bool goes_through(const SavedConnection<FlowKeyV4>& c, const NatSnapshot::Mapping& m) {
  return m.protocol != 0 && c.protocol == m.protocol && c.original.protocol == m.protocol && c.reply.protocol == m.protocol &&
         c.original.src_addr == m.inside_addr && c.reply.dst_addr == m.external_addr;
}

}  // namespace

NatReplica::NatReplica(unsigned workers, Nanos quarantine) : workers_(workers), quarantine_(quarantine) {}

void NatReplica::clear() {
  sessions_.clear();
  mappings_.clear();
  blocks_.clear();
  quarantined_ports_.clear();
  quarantined_blocks_.clear();
}

void NatReplica::use_mapping(const NatSnapshot::Mapping& m, std::uint8_t worker) {
  MappingUse& use = mappings_[mapping_key(m)];
  use.mapping = m;
  use.worker = worker;
  ++use.sessions;
}

void NatReplica::leave_mapping(const NatSnapshot::Mapping& m, Nanos now) {
  const auto it = mappings_.find(mapping_key(m));
  if (it == mappings_.end() || --it->second.sessions != 0) return;
  if (quarantine_ != 0) {
    quarantined_ports_.push_back({it->second.worker, m.external_addr, to_host16(m.external_port), m.protocol, now + quarantine_});
  }
  mappings_.erase(it);
}

void NatReplica::close(const FlowKeyV4& original, Nanos now) {
  const auto it = sessions_.find(original);
  if (it == sessions_.end()) return;
  const Session s = it->second;
  sessions_.erase(it);
  leave_mapping(s.mapping, now);
  if (s.hairpin.protocol != 0) leave_mapping(s.hairpin, now);
}

bool NatReplica::apply(const SyncRecord& record, Nanos now) {
  // Quarantines that are over are dropped now and then, so the lists stay as long as the quarantines.
  const auto prune = [&](std::vector<Quarantined>& list) {
    if (list.size() < 1024 || list.front().free_at > now) return;
    std::erase_if(list, [&](const Quarantined& q) { return q.free_at <= now; });
  };
  prune(quarantined_ports_);
  prune(quarantined_blocks_);
  return std::visit(
      [&](const auto& r) -> bool {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, SyncResyncBegin>) {
          if (r.workers != workers_) return false;
          clear();
          return true;
        } else if constexpr (std::is_same_v<R, SyncResyncEnd>) {
          return true;
        } else if constexpr (std::is_same_v<R, SyncLbException> || std::is_same_v<R, SyncLbExceptionGone>) {
          return false;  // a balancer's, never a NAT's
        } else {
          if (r.worker >= workers_) return false;
          if constexpr (std::is_same_v<R, SyncSession>) {
            if (!goes_through(r.connection, r.mapping)) return false;
            close(r.connection.original, now);  // a copy held already gives way to this one
            sessions_[r.connection.original] = {r.worker, r.connection, now + r.connection.remaining, r.mapping, r.hairpin};
            use_mapping(r.mapping, r.worker);
            if (r.hairpin.protocol != 0) use_mapping(r.hairpin, r.worker);
          } else if constexpr (std::is_same_v<R, SyncRefresh>) {
            const auto it = sessions_.find(r.connection.original);
            if (it != sessions_.end()) {
              it->second.connection.tcp = r.connection.tcp;
              it->second.connection.replied = r.connection.replied;
              it->second.deadline = now + r.connection.remaining;
            }
          } else if constexpr (std::is_same_v<R, SyncClosed>) {
            close(r.original, now);
          } else if constexpr (std::is_same_v<R, SyncBlock>) {
            const std::uint64_t key = block_key(r.public_addr, r.first_port);
            if (r.event == PortBlockRecord::Event::allocated) {
              blocks_[key] = {r.worker, r.subscriber};
              std::erase_if(quarantined_blocks_,
                            [&](const Quarantined& q) { return q.public_addr == r.public_addr && q.port == r.first_port; });
            } else if (blocks_.erase(key) != 0 && quarantine_ != 0) {
              quarantined_blocks_.push_back({r.worker, r.public_addr, r.first_port, 0, now + quarantine_});
            }
          } else if constexpr (std::is_same_v<R, SyncQuarantinedPort>) {
            quarantined_ports_.push_back({r.worker, r.port.public_addr, r.port.port, r.port.protocol, now + r.port.remaining});
          } else if constexpr (std::is_same_v<R, SyncQuarantinedBlock>) {
            quarantined_blocks_.push_back({r.worker, r.block.public_addr, r.block.first_port, 0, now + r.block.remaining});
          }
          return true;
        }
      },
      record);
}

NatSnapshot NatReplica::snapshot(unsigned worker, Nanos now) const {
  NatSnapshot s;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> index_of;  // mapping key -> index in s.mappings
  const auto index = [&](const NatSnapshot::Mapping& m) {
    const auto [it, added] = index_of.try_emplace(mapping_key(m), static_cast<std::uint32_t>(s.mappings.size()));
    if (added) s.mappings.push_back(m);
    return it->second;
  };
  for (const auto& [original, session] : sessions_) {
    if (session.worker != worker) continue;
    SavedConnection<FlowKeyV4> c = session.connection;
    c.remaining = left(session.deadline, now);
    const std::uint32_t mapping = index(session.mapping);
    s.sessions.push_back({c, mapping, session.hairpin.protocol != 0 ? index(session.hairpin) : NatSnapshot::kNoMapping});
  }
  for (const auto& [key, block] : blocks_) {
    if (block.worker == worker) s.blocks.push_back({block.subscriber, static_cast<std::uint32_t>(key >> 16), static_cast<std::uint16_t>(key)});
  }
  // Ports in use by a mapping of the snapshot, or in a held block, are no longer waiting; a port or a
  // block freed twice (its copy here missed a use in between) waits from its later time.
  const auto port_key = [](std::uint32_t address, std::uint16_t port, std::uint8_t protocol) {
    return (std::uint64_t{address} << 24) | (std::uint64_t{port} << 8) | protocol;
  };
  absl::flat_hash_set<std::uint64_t> used;
  for (const NatSnapshot::Mapping& m : s.mappings) used.insert(port_key(m.external_addr, to_host16(m.external_port), m.protocol));
  absl::flat_hash_map<std::uint64_t, Quarantined> latest_port, latest_block;
  for (const Quarantined& q : quarantined_ports_) {
    const std::uint64_t key = port_key(q.public_addr, q.port, q.protocol);
    if (q.worker != worker || q.free_at <= now || used.contains(key)) continue;
    const auto [it, added] = latest_port.try_emplace(key, q);
    if (!added && it->second.free_at < q.free_at) it->second = q;
  }
  for (const Quarantined& q : quarantined_blocks_) {
    const std::uint64_t key = block_key(q.public_addr, q.port);
    if (q.worker != worker || q.free_at <= now || blocks_.contains(key)) continue;
    const auto [it, added] = latest_block.try_emplace(key, q);
    if (!added && it->second.free_at < q.free_at) it->second = q;
  }
  std::vector<Quarantined> ports, blocks;
  for (const auto& [key, q] : latest_port) ports.push_back(q);
  for (const auto& [key, q] : latest_block) blocks.push_back(q);
  const auto by_time = [](const Quarantined& a, const Quarantined& b) { return a.free_at < b.free_at; };
  std::sort(ports.begin(), ports.end(), by_time);
  std::sort(blocks.begin(), blocks.end(), by_time);
  for (const Quarantined& q : ports) s.quarantined_ports.push_back({q.public_addr, q.port, q.protocol, left(q.free_at, now)});
  for (const Quarantined& q : blocks) s.quarantined_blocks.push_back({q.public_addr, q.port, left(q.free_at, now)});
  return s;
}

}  // namespace flowtrack
