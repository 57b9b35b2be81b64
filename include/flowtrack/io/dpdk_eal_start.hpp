// Starting DPDK's EAL with the operator's arguments, for a live data plane (`flowtrack run --dpdk`),
// before anything calls ensure_dpdk_eal (dpdk_eal.hpp, which then finds it started). Declared apart
// from dpdk_eal.hpp, which every user of DPDK's tables includes (lab/dpdk_table.hpp), and defined beside it
// (dpdk_eal.cpp: one EAL per process).
#pragma once

#include <string>
#include <vector>

namespace flowtrack {

// Initialises EAL with `args` (what follows the program name on a DPDK command line: "--no-huge",
// "--vdev=net_af_packet0,iface=veth0", ...). Throws std::runtime_error naming the problem if EAL was
// already started or refuses the arguments (EAL cannot be started twice in one process, even after a
// failure).
void start_dpdk_eal(const std::vector<std::string>& args);

}  // namespace flowtrack
