#include "nf_grid_nat.hpp"

namespace flowtrack::cli {
template std::vector<WorkerResult> run_nat<HeapAging>(const NfChoice&, NfScaling, const NfConfigs&, const PacketStore&,
                                                  const PacketPartition&);
}  // namespace flowtrack::cli
