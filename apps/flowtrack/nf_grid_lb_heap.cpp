#include "nf_grid_lb.hpp"

namespace flowtrack::cli {
template std::vector<WorkerResult> run_stateful_lb<HeapAging>(const NfChoice&, NfScaling, const NfConfigs&, const PacketStore&,
                                                  const PacketPartition&);
}  // namespace flowtrack::cli
