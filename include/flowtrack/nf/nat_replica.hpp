// The standby's copy of its active's state: the records of the sync link (nat_sync_message.hpp)
// applied in order, kept as plain data by worker, until a takeover turns them into one snapshot per
// worker (nat_snapshot.hpp) that each worker's fresh NAT restores (Nat44::restore), as after a restart.
//
// Times arrive as what is left and are kept as deadlines on the standby's clock. Applying is idempotent
// where a resynchronisation may repeat what the stream already said: a session opened twice is the
// later copy, a refresh or close of a session it does not hold is ignored. A mapping lives while a
// session names it; its port then waits out the quarantine, as on the active, so that a takeover does
// not give it again too soon. The same for a block taken back.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"
#include "flowtrack/nf/nat_sync_message.hpp"

namespace flowtrack {

class NatReplica final : public SyncReplica {
 public:
  // For a NAT of `workers` workers whose freed ports and blocks wait `quarantine`.
  NatReplica(unsigned workers, Nanos quarantine);

  // Applies one record at `now`; false (nothing changed) for one that cannot be this NAT's: a worker
  // out of range, a session whose mapping is not its inside endpoint's.
  bool apply(const SyncRecord& record, Nanos now) override;

  // Worker w's state at `now`, ready for Nat44::restore: the sessions and the mappings they name, the
  // blocks held, the quarantines not yet over (and not of a port or block in use), the next free first.
  NatSnapshot snapshot(unsigned worker, Nanos now) const;

  unsigned workers() const { return workers_; }
  std::size_t sessions() const { return sessions_.size(); }
  std::size_t blocks() const { return blocks_.size(); }

 private:
  struct Session {
    std::uint8_t worker = 0;
    SavedConnection<FlowKeyV4> connection;  // remaining: unused, see deadline
    Nanos deadline = 0;
    NatSnapshot::Mapping mapping, hairpin;
  };
  struct MappingUse {
    NatSnapshot::Mapping mapping;
    std::uint8_t worker = 0;
    std::uint32_t sessions = 0;
  };
  struct HeldBlock {
    std::uint8_t worker = 0;
    std::uint32_t subscriber = 0;
  };
  struct Quarantined {
    std::uint8_t worker = 0;
    std::uint32_t public_addr = 0;
    std::uint16_t port = 0;     // host order; a block's first port
    std::uint8_t protocol = 0;  // ports only
    Nanos free_at = 0;
  };

  static std::uint64_t mapping_key(const NatSnapshot::Mapping& m) {
    return (std::uint64_t{m.inside_addr} << 32) | (std::uint64_t{m.inside_port} << 8) | m.protocol;
  }
  static std::uint64_t block_key(std::uint32_t public_addr, std::uint16_t first_port) {
    return (std::uint64_t{public_addr} << 16) | first_port;
  }
  void clear();
  void use_mapping(const NatSnapshot::Mapping& m, std::uint8_t worker);
  void leave_mapping(const NatSnapshot::Mapping& m, Nanos now);
  void close(const FlowKeyV4& original, Nanos now);

  unsigned workers_;
  Nanos quarantine_;
  absl::flat_hash_map<FlowKeyV4, Session, FlowKeyHasher> sessions_;  // by original tuple
  absl::flat_hash_map<std::uint64_t, MappingUse> mappings_;           // by inside endpoint
  absl::flat_hash_map<std::uint64_t, HeldBlock> blocks_;              // by public address and first port
  std::vector<Quarantined> quarantined_ports_, quarantined_blocks_;   // in the order they were freed
};

}  // namespace flowtrack
