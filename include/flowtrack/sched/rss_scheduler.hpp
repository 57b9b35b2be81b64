// Plain RSS, an extra baseline (the paper has none): a NIC's static steering, the Toeplitz hash of the
// tuple through a 128-entry redirection table filled round-robin over all cores. No feedback, no
// migration, no notion of service: what a server does without a scheduler.
#pragma once

#include "flowtrack/hash/toeplitz.hpp"
#include "flowtrack/sched/flow_scheduler.hpp"

namespace flowtrack {

class RssScheduler final : public FlowScheduler {
 public:
  explicit RssScheduler(unsigned cores) : table_(cores) {}

  unsigned core_for(const PacketRef& packet, Picos /*now*/) override { return table_.queue(packet.rss_hash); }

 private:
  RedirectionTable table_;
};

}  // namespace flowtrack
