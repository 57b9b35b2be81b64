// The CLI's subcommand groups; each lives in its own file and adds itself to the app.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>

namespace flowtrack::cli {

// Thrown by a command for a user error (bad flag value, unreadable file): main prints the message on
// one line and exits non-zero.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void add_trace_commands(CLI::App& app);
void add_run_command(CLI::App& app);
// `flowtrack bench`: its subcommands, each in its own file.
void add_bench_commands(CLI::App& app);
void add_table_bench(CLI::App& bench);
void add_scale_bench(CLI::App& bench);
void add_aging_bench(CLI::App& bench);
void add_nf_bench(CLI::App& bench);
void add_compact_bench(CLI::App& bench);

}  // namespace flowtrack::cli
