#include "discarding_nat_events.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "nf_grid_nat.hpp"

namespace flowtrack::cli {

NfRun run_nat_with_sync_events(const NfChoice& choice, bool shared, const NfConfigs& configs, const PacketStore& trace,
                               const PacketPartition& partition, const ReplayOptions& options) {
  return replay_nat<TimerWheel, DiscardingNatEvents>(choice, shared, configs, trace, partition, options);
}

}  // namespace flowtrack::cli
