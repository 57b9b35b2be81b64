// Telling a routing speaker which VIPs to announce (runtime/route_announcer.hpp): the file written whole
// before the command runs, the command run only on a change, a failure noted once and told again later.
#include "flowtrack/runtime/route_announcer.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/scratch_suite.hpp"

namespace flowtrack {
namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RouteAnnouncerTest : public testing::ScratchSuite<RouteAnnouncerTest> {
 protected:
  static void SetUpTestSuite() { make_scratch("route_announcer"); }
};

TEST_F(RouteAnnouncerTest, TheCommandSeesEachNewFileWholeAndRunsOnlyOnAChange) {
  const std::string file = path("vips.conf"), log = path("speaker.log");
  // The "speaker" appends the file as it finds it when the command runs.
  AnnounceConfig config{file, {"sh", "-c", "cat " + file + " >> " + log + "; echo --- >> " + log}};
  std::vector<std::string> notes;
  RouteAnnouncer announcer(config, [&](const std::string& note) { notes.push_back(note); });
  EXPECT_EQ(contents(file).find("route"), std::string::npos);  // nothing announced before the start
  const std::vector<std::uint32_t> vips = {inet_addr("192.0.2.10")};
  EXPECT_TRUE(announcer.publish(vips));
  EXPECT_TRUE(announcer.publish(vips));  // no change: the command does not run
  EXPECT_TRUE(announcer.publish({}));
  const std::string seen = contents(log);
  std::size_t runs = 0;
  for (std::size_t at = seen.find("---"); at != std::string::npos; at = seen.find("---", at + 1)) ++runs;
  EXPECT_EQ(runs, 3u);  // the start's withdrawal, the announcement, the withdrawal
  const std::size_t route = seen.find("route 192.0.2.10/32 blackhole;");
  ASSERT_NE(route, std::string::npos);
  EXPECT_EQ(seen.find("route", route + 1), std::string::npos);  // withdrawn in the third file
  EXPECT_TRUE(notes.empty());
}

TEST_F(RouteAnnouncerTest, AFailedCommandIsNotedOnceAndTheSpeakerToldAgainLater) {
  std::vector<std::string> notes;
  RouteAnnouncer announcer({path("failing.conf"), {"false"}}, [&](const std::string& note) { notes.push_back(note); });
  ASSERT_EQ(notes.size(), 1u);  // the start's withdrawal failed
  EXPECT_NE(notes[0].find("'false' exited with status 1"), std::string::npos);
  const std::vector<std::uint32_t> vips = {inet_addr("192.0.2.10")};
  EXPECT_FALSE(announcer.publish(vips));
  EXPECT_FALSE(announcer.publish(vips));  // not told: no success is remembered
  EXPECT_EQ(notes.size(), 2u);            // the same failure is noted once
  // The file is written all the same: a speaker that starts later reads it.
  EXPECT_NE(contents(path("failing.conf")).find("route 192.0.2.10/32"), std::string::npos);
}

TEST_F(RouteAnnouncerTest, AFileThatCannotBeWrittenStopsTheStart) {
  EXPECT_THROW(RouteAnnouncer({path("no-such-directory/vips.conf"), {}}, [](const std::string&) {}), std::runtime_error);
}

TEST(RunProgram, ACommandThatHangsIsKilledAndOneMissingIsNamed) {
  const auto hung = run_program({"sleep", "30"}, 50 * kNanosPerMilli);
  ASSERT_TRUE(hung.has_value());
  EXPECT_NE(hung->find("killed"), std::string::npos);
  const auto missing = run_program({"no-such-command-here"}, kNanosPerSecond);
  ASSERT_TRUE(missing.has_value());
  EXPECT_NE(missing->find("cannot run no-such-command-here"), std::string::npos);
  EXPECT_FALSE(run_program({"true"}, kNanosPerSecond).has_value());
}

}  // namespace
}  // namespace flowtrack
