#include "nf_grid_nat.hpp"

namespace flowtrack::cli {
template NfRun run_nat<HeapAging>(const NfChoice&, bool, const NfConfigs&, const PacketStore&, const PacketPartition&,
                      const ReplayOptions&);
}  // namespace flowtrack::cli
