#include "flowtrack/nf/nat_sync_records.hpp"

namespace flowtrack {

SyncRecord sync_record_of(const NatEvent& event, std::uint8_t worker) {
  switch (event.kind) {
    case NatEvent::Kind::session_opened: return SyncSession{worker, event.connection, event.mapping, event.hairpin};
    case NatEvent::Kind::session_refreshed: return SyncRefresh{worker, event.connection};
    case NatEvent::Kind::session_closed: return SyncClosed{worker, event.connection.original};
  }
  return SyncClosed{worker, event.connection.original};
}

SyncRecord sync_record_of(const PortBlockRecord& block, std::uint8_t worker) {
  return SyncBlock{worker, block.event, block.inside_addr, block.public_addr, block.first_port, block.last_port};
}

void append_state_records(const NatSnapshot& s, std::uint8_t worker, std::vector<SyncRecord>& out) {
  // A block's last port is not in the snapshot; the replica keys blocks by their first port alone.
  for (const NatSnapshot::Block& b : s.blocks) {
    out.push_back(SyncBlock{worker, PortBlockRecord::Event::allocated, b.subscriber, b.public_addr, b.first_port, b.first_port});
  }
  const auto mapping = [&](std::uint32_t index) { return index < s.mappings.size() ? s.mappings[index] : NatSnapshot::Mapping{}; };
  for (const NatSnapshot::Session& session : s.sessions) {
    out.push_back(SyncSession{worker, session.connection, mapping(session.mapping), mapping(session.hairpin_mapping)});
  }
  for (const NatSnapshot::QuarantinedPort& q : s.quarantined_ports) out.push_back(SyncQuarantinedPort{worker, q});
  for (const NatSnapshot::QuarantinedBlock& q : s.quarantined_blocks) out.push_back(SyncQuarantinedBlock{worker, q});
}

}  // namespace flowtrack
