// The CLI's subcommand groups; each lives in its own file and adds itself to the app.
#pragma once

#include <CLI/CLI.hpp>

#include "user_error.hpp"

namespace flowtrack::cli {

void add_trace_commands(CLI::App& app);
void add_run_command(CLI::App& app);
// `flowtrack bench`: its subcommands, each in its own file.
void add_bench_commands(CLI::App& app);
void add_table_bench(CLI::App& bench);
void add_scale_bench(CLI::App& bench);
void add_aging_bench(CLI::App& bench);
void add_nf_bench(CLI::App& bench);
void add_compact_bench(CLI::App& bench);
// `flowtrack sim`: the simulators.
void add_sim_commands(CLI::App& app);

}  // namespace flowtrack::cli
