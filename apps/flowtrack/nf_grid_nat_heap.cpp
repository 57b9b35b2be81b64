#include "nf_grid_nat.hpp"

namespace flowtrack::cli {
template NfRun run_nat<HeapAging>(const NfChoice&, NfScaling, const NfConfigs&, const PacketStore&, const PacketPartition&,
                      const NfRunOptions&);
}  // namespace flowtrack::cli
