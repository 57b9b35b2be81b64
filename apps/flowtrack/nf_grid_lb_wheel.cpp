#include "nf_grid_lb.hpp"

namespace flowtrack::cli {
template NfRun run_stateful_lb<TimerWheel>(const NfChoice&, bool, const NfConfigs&, const PacketStore&, const PacketPartition&,
                      const ReplayOptions&);
}  // namespace flowtrack::cli
