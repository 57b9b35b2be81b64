// What the active of a NAT pair puts on its sync link (nat_sync_message.hpp), from what its workers
// tell: a session's event (nat_events.hpp), a port block given or taken back (port_block_log.hpp),
// and, for a resynchronisation, a worker's whole state (nat_snapshot.hpp) as the records that make it.
// The standby's NatReplica applies them in order; replaying a worker's whole-state records into an
// empty replica gives back the worker's snapshot (the same sessions, mappings, blocks and quarantines).
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/nf/nat_events.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"
#include "flowtrack/nf/nat_sync_message.hpp"
#include "flowtrack/nf/port_block_log.hpp"

namespace flowtrack {

// The record of worker `worker`'s session event.
SyncRecord sync_record_of(const NatEvent& event, std::uint8_t worker);
// The record of worker `worker`'s block given or taken back.
SyncRecord sync_record_of(const PortBlockRecord& block, std::uint8_t worker);
// Appends the records of worker `worker`'s whole state: its blocks, its sessions (each with its
// mappings), its quarantined ports and blocks, in the order they become free.
void append_state_records(const NatSnapshot& snapshot, std::uint8_t worker, std::vector<SyncRecord>& out);

}  // namespace flowtrack
