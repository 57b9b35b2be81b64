#include "nf_grid_lb.hpp"

namespace flowtrack::cli {
template NfRun run_stateful_lb<HeapAging>(const NfChoice&, bool, const NfConfigs&, const PacketStore&, const PacketPartition&,
                      const ReplayOptions&);
}  // namespace flowtrack::cli
