// DPDK's Environment Abstraction Layer, initialised once per process for the parts of flowtrack that use
// DPDK libraries (rte_hash, rings, ports). By default it runs without hugepages or PCI: memory comes from
// ordinary pages, so it works on any machine, in CI and under the sanitizers. A live data plane starts
// it with the operator's arguments instead (start_dpdk_eal), before anything else asks for it.
#pragma once

#include <string>
#include <vector>

namespace flowtrack {

// Initialises EAL on first call (later calls return at once, whoever started it). Memory size:
// FLOWTRACK_DPDK_MEMORY_MB (default 4096; only touched pages cost real memory). Throws
// std::runtime_error if EAL refuses.
void ensure_dpdk_eal();

// Initialises EAL with `args` (what follows the program name on a DPDK command line: "--no-huge",
// "--vdev=net_af_packet0,iface=veth0", ...). Throws std::runtime_error naming the problem if EAL was
// already started or refuses the arguments (EAL cannot be started twice in one process, even after a
// failure).
void start_dpdk_eal(const std::vector<std::string>& args);

}  // namespace flowtrack
