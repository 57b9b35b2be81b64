// Every bench's and simulator's --json output opens with one context record (apps/flowtrack/run_context.hpp):
// the run's date, command line, commit and build, and the machine it ran on, so that a raw file says where
// its figures come from. Each command on a tiny workload.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "support/cli_runner.hpp"

namespace {

using flowtrack::testing::is_context_record;
using flowtrack::testing::json_lines;
using flowtrack::testing::run_cli;

struct JsonCommand {
  const char* name;  // the test's name
  const char* arguments;
  bool pinned;  // the command pins its measuring threads itself
};

// What GoogleTest prints of a parameter: the command line.
void PrintTo(const JsonCommand& command, std::ostream* out) { *out << command.arguments; }

class ContextRecord : public ::testing::TestWithParam<JsonCommand> {};

TEST_P(ContextRecord, OpensTheOutputOnceAndDescribesTheRun) {
  const std::string arguments = GetParam().arguments;
  const auto result = run_cli(arguments);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::vector<nlohmann::json> lines = json_lines(result.output, true);
  ASSERT_GE(lines.size(), 2u) << result.output;
  ASSERT_TRUE(is_context_record(lines.front())) << lines.front().dump();
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_FALSE(is_context_record(lines[i])) << i;

  const nlohmann::json& context = lines.front()["context"];
  for (const char* text : {"date", "commit", "build_type", "compiler", "cxx_flags", "cpu_model", "cpus_allowed", "kernel"}) {
    ASSERT_TRUE(context.contains(text) && context[text].is_string()) << text << " in " << context.dump();
    EXPECT_FALSE(context[text].get<std::string>().empty()) << text;
  }
  EXPECT_EQ(context["command"], "flowtrack " + arguments);
  EXPECT_EQ(context["pinned"], GetParam().pinned);
  EXPECT_GE(context["cpus_online"].get<int>(), 1);
  EXPECT_GT(context["tsc_ghz"].get<double>(), 0.1);
  EXPECT_EQ(context["load_average"].size(), 3u);
  EXPECT_TRUE(context["commit_dirty"].is_boolean());
  EXPECT_TRUE(context["caches"].is_object());
  EXPECT_TRUE(context["sanitizers"].is_string());
  EXPECT_TRUE(context["transparent_hugepages"].is_string());
}

INSTANTIATE_TEST_SUITE_P(
    EveryBenchAndSimulator, ContextRecord,
    ::testing::Values(
        JsonCommand{"BenchTable", "bench table --tables cuckoo --sizes 4096 --loads 0.5 --ops hit --reps 1 --json",
                    false},
        JsonCommand{"BenchCompact", "bench compact --structures othello --sizes 1024 --reps 1 --queries 16384 --json",
                    false},
        JsonCommand{"BenchAging",
                    "bench aging --methods wheel --capacity 4096 --packets 100000 --frequencies 100 --reps 1 --json", false},
        JsonCommand{"BenchScale",
                    "bench scale --strategies sharded --tables chained --workers 1 --flows 500 --windows 1 --reps 1 "
                    "--passes 1 --no-software --json",
                    true},
        JsonCommand{"BenchNf",
                    "bench nf --nfs fwd --workers 1 --burst 32 --flows 300 --windows 1 --reps 1 --no-stages --json", true},
        JsonCommand{"SimSched",
                    "sim sched --policy rss --zipf-flows 2000 --zipf-packets 20000 --duration-s 0.01 --json", false},
        JsonCommand{"SimAfd", "sim afd --zipf-flows 2000 --zipf-packets 20000 --annex 64 --json", false}),
    [](const ::testing::TestParamInfo<JsonCommand>& info) { return std::string(info.param.name); });

}  // namespace
