// `flowtrack nat-log who`: the answer from journal files as text and JSON, nobody outside a block, a
// malformed line skipped with a warning, several files read together, and bad arguments refused.
#include <gtest/gtest.h>

#include "support/cli_runner.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

using testing::first_json_object;
using testing::run_cli;

constexpr const char* kAllocated =
    R"({"time":"2026-11-28T09:00:00Z","event":"allocated","inside":"10.0.3.7","public":"203.0.113.1","ports":[40448,40959]})";
constexpr const char* kReleased =
    R"({"time":"2026-11-28T09:10:00Z","event":"released","inside":"10.0.3.7","public":"203.0.113.1","ports":[40448,40959]})";

TEST(NatLogCli, WhoNamesTheInsideAddressThatHeldThePort) {
  const std::string log = test::temp_config("who.jsonl", std::string(kAllocated) + "\n" + kReleased + "\n");
  const auto text = run_cli("nat-log who 203.0.113.1:40500 2026-11-28T09:05:00Z --log " + log);
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("10.0.3.7 (block 40448-40959, allocated 2026-11-28T09:00:00.000000000Z, released "
                             "2026-11-28T09:10:00.000000000Z)"),
            std::string::npos)
      << text.output;
  const auto json = run_cli("nat-log who 203.0.113.1:40500 1795856700 --json --log " + log);  // 09:05:00 in seconds
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = first_json_object(json.output);
  EXPECT_EQ(j["inside"], "10.0.3.7");
  EXPECT_EQ(j["ports"], nlohmann::json::array({40448, 40959}));
  EXPECT_EQ(j["released"], "2026-11-28T09:10:00.000000000Z");
}

TEST(NatLogCli, NobodyBeforeTheBlockAfterItsReleaseOrOnAnotherAddress) {
  const std::string log = test::temp_config("nobody.jsonl", std::string(kAllocated) + "\n" + kReleased + "\n");
  for (const char* question : {"203.0.113.1:40500 2026-11-28T08:59:59Z", "203.0.113.1:40500 2026-11-28T09:10:00Z",
                               "203.0.113.2:40500 2026-11-28T09:05:00Z", "203.0.113.1:40960 2026-11-28T09:05:00Z"}) {
    const auto r = run_cli(std::string("nat-log who ") + question + " --json --log " + log);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(first_json_object(r.output).contains("inside")) << question;
  }
}

TEST(NatLogCli, AMalformedLineIsSkippedWithAWarningAndFilesAreReadTogether) {
  const std::string first = test::temp_config("first.jsonl", std::string(kAllocated) + "\n{\"time\": cut short");
  const std::string second = test::temp_config("second.jsonl", std::string(kReleased) + "\n");
  const auto r = run_cli("nat-log who 203.0.113.1:40448 2026-11-28T09:15:00Z --log " + first + " --log " + second);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("first.jsonl:2: not a JSON object (line skipped)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no inside address held it"), std::string::npos) << r.output << ": the release is in the second file";
}

TEST(NatLogCli, BadArgumentsAreRefusedWithStatusTwo) {
  const std::string log = test::temp_config("args.jsonl", std::string(kAllocated) + "\n");
  for (const char* arguments : {"203.0.113.1 2026-11-28T09:05:00Z", "203.0.113.1:70000 2026-11-28T09:05:00Z",
                                "203.0.113:80 2026-11-28T09:05:00Z", "203.0.113.1:80 yesterday"}) {
    const auto r = run_cli(std::string("nat-log who ") + arguments + " --log " + log);
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.output;
  }
  EXPECT_EQ(run_cli("nat-log who 203.0.113.1:80 0 --log /nonexistent/log.jsonl").exit_code, 2);
}

}  // namespace
}  // namespace flowtrack
