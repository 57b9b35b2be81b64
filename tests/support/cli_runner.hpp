// Runs the flowtrack CLI (the binary ctest names in FLOWTRACK_CLI) as a user would: a real process,
// its exit code and its output, stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace flowtrack::testing {

struct CliResult {
  int exit_code;
  std::string output;
};

inline CliResult run_cli(const std::string& arguments) {
  // The CLI of this build tree (tests/CMakeLists.txt), unless FLOWTRACK_CLI names another.
  const char* cli = std::getenv("FLOWTRACK_CLI");
  if (cli == nullptr) cli = FLOWTRACK_CLI_PATH;
  const std::string command = std::string(cli) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  CliResult result{0, ""};
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The record that opens a bench's or simulator's --json output (apps/flowtrack/run_context.hpp): one
// key, "context". It describes the run, not a result.
inline bool is_context_record(const nlohmann::json& object) {
  return object.is_object() && object.size() == 1 && object.contains("context");
}

// Every line of `output` that is a JSON object (a command's --json lines), parsed, in order; the
// context record too when `with_context`.
inline std::vector<nlohmann::json> json_lines(const std::string& output, bool with_context = false) {
  std::istringstream lines(output);
  std::string line;
  std::vector<nlohmann::json> objects;
  while (std::getline(lines, line)) {
    if (line.rfind('{', 0) != 0) continue;  // DPDK may log a line of its own
    nlohmann::json object = nlohmann::json::parse(line);
    if (with_context || !is_context_record(object)) objects.push_back(std::move(object));
  }
  return objects;
}

// The first result of `output` (a command's --json report), parsed; null if none.
inline nlohmann::json first_json_object(const std::string& output) {
  const std::vector<nlohmann::json> objects = json_lines(output);
  return objects.empty() ? nlohmann::json() : objects.front();
}

}  // namespace flowtrack::testing
