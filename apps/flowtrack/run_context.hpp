// The context record: the first line of every benchmark's and simulator's --json output, saying where
// and on what the figures after it were measured, so that a raw file can be placed and compared with
// another (the same binary gave one function 457 cycles a packet on one host and 211 on another).
//
//   {"context": {"date", "command", "commit", "commit_dirty", "build_type", "compiler", "cxx_flags",
//                "sanitizers", "cpu_model", "cpus_online", "cpus_allowed", "caches", "tsc_ghz", "kernel",
//                "host", "load_average", "transparent_hugepages", "pinned"}}
//
// A reader of these files tells the record from the results by its one key, "context"
// (lab/json2result.py, scripts/plot-sched.py, tests/support/cli_runner.hpp).
#pragma once

namespace flowtrack::cli {

// Keeps the command line for the record's "command" (main() calls it once, before parsing).
void remember_command_line(int argc, const char* const* argv);

// Prints the record as one JSON line on stdout. `pinned`: the command pins its measuring threads to
// cores itself (what taskset allowed it is "cpus_allowed").
void print_run_context(bool pinned);

}  // namespace flowtrack::cli
