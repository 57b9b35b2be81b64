// DPDK's Environment Abstraction Layer, initialised once per process for the parts of flowtrack that use
// DPDK libraries (rte_hash, rings, ports). It runs without hugepages or PCI: memory comes from ordinary
// pages, so it works on any machine, in CI and under the sanitizers.
#pragma once

namespace flowtrack {

// Initialises EAL on first call (later calls return at once). Memory size: FLOWTRACK_DPDK_MEMORY_MB
// (default 4096; only touched pages cost real memory). Throws std::runtime_error if EAL refuses.
void ensure_dpdk_eal();

}  // namespace flowtrack
