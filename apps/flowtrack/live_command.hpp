// `flowtrack run --dpdk "EAL arguments"`: a network function live on DPDK ports (the [dataplane] table
// of its configuration), until SIGINT or SIGTERM.
#pragma once

#include "run_command.hpp"

namespace flowtrack::cli {

void live_command(const RunCommandOptions& o);

}  // namespace flowtrack::cli
