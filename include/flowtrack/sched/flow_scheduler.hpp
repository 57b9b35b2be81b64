// The flow-to-core scheduler interface: one call per packet, queue-length feedback through CoreLoads.
//
// Why an abstract class and not a concept: the policy is chosen at run time (the CLI's --policy, later a
// dispatcher's configuration), and the simulator that drives every policy is compiled once, in one .cpp,
// instead of once per policy in a header template (the CI build budget). The virtual call costs a few
// nanoseconds against the tens a policy spends in its own tables, and the simulator measures it.
//
// What a live dispatcher needs is exactly what the simulator uses: per packet, `core_for` with the flow's
// identity, its two hashes and its service; and the CoreLoads the scheduler was built over, kept current
// from the worker rings' fill levels.
#pragma once

#include <cstdint>

#include "flowtrack/sched/picos.hpp"

namespace flowtrack {

struct PacketRef {
  // Identifies the flow, unique across services: the simulator's dense flow index; live, a 64-bit hash
  // of the 5-tuple or the tracker's FlowId. Any value but ~0 (the flow indexes' empty mark).
  std::uint64_t flow = 0;
  std::uint32_t rss_hash = 0;  // the Toeplitz hash a NIC computes (the RSS baseline's input)
  std::uint16_t crc16 = 0;     // crc16_flow of the 5-tuple (the map tables' input)
  std::uint8_t service = 0;    // the processing path the packet takes, 0 .. services-1
};

struct SchedulerCounters {
  std::uint64_t migrations = 0;  // flows (re)written into a migration table
  std::uint64_t core_moves = 0;  // cores handed from one service to another
};

class FlowScheduler {
 public:
  static constexpr int kSharedCore = -1;

  virtual ~FlowScheduler() = default;

  // The core that processes this packet. May update the scheduler's own tables (detector, migrations,
  // core allocation); never allocates on the way of a packet that changes nothing.
  virtual unsigned core_for(const PacketRef& packet, Picos now) = 0;

  // A hint, a few arrivals ahead: `flow` (PacketRef::flow) will soon come to core_for. A policy with a
  // per-flow table starts fetching the flow's entry into the cache; nothing else changes.
  virtual void prefetch(std::uint64_t /*flow*/) const {}

  // The service a core is dedicated to, or kSharedCore when it takes every service's packets.
  virtual int core_owner(unsigned /*core*/) const { return kSharedCore; }

  // Whether the policy counts `flow` as aggressive now (LAPS: in its detector's cache).
  virtual bool aggressive(std::uint64_t /*flow*/) const { return false; }

  const SchedulerCounters& counters() const { return counters_; }
  // The core the latest migration moved a flow off (meaningful once counters().migrations > 0).
  unsigned last_migration_source() const { return last_migration_source_; }

 protected:
  void count_migration(unsigned from) {
    ++counters_.migrations;
    last_migration_source_ = from;
  }

  SchedulerCounters counters_;
  unsigned last_migration_source_ = 0;
};

}  // namespace flowtrack
