// The engine's workers as DPDK sees them (runtime/engine.hpp, EngineOptions): on the CPUs of the EAL's
// lcores (`-l`), and registered with the EAL, so that each has an lcore id, and with it a mempool cache
// (an unregistered thread takes every mbuf from the shared ring) and a place in DPDK's per-lcore state.
#pragma once

#include <vector>

namespace flowtrack {

// The CPU ids of the EAL's lcores, the main lcore's first. The EAL must be up (io/dpdk_eal.hpp).
std::vector<unsigned> eal_lcore_cpus();

// On the calling thread (a worker, as its start hook): gives it an lcore id. Throws std::runtime_error
// when the EAL has none left (RTE_MAX_LCORE).
void register_with_eal();
// On the same thread, before it ends.
void unregister_from_eal();

}  // namespace flowtrack
