// flowtrack: connection tracking for stateful network functions on multi-core servers.
#include <fmt/core.h>

#include <exception>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"flowtrack: fast, correct connection tracking for stateful network functions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "flowtrack 0.1.0");
  flowtrack::cli::add_trace_commands(app);
  flowtrack::cli::add_bench_commands(app);
  flowtrack::cli::add_run_command(app);
  flowtrack::cli::add_sim_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const flowtrack::cli::UserError& e) {
    fmt::print(stderr, "flowtrack: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "flowtrack: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
