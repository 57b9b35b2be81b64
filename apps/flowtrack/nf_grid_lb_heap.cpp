#include "nf_grid_lb.hpp"

namespace flowtrack::cli {
template NfRun run_stateful_lb<HeapAging>(const NfChoice&, NfScaling, const NfConfigs&, const PacketStore&, const PacketPartition&,
                      const NfRunOptions&);
}  // namespace flowtrack::cli
