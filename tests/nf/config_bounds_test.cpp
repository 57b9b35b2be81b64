// A configuration's text before the parser (nf/config_text.hpp): how it is read (a pipe whole, a
// directory refused by name) and bounded (size, nesting counted outside strings and comments); and
// what a configuration takes once built (nf/config_memory.hpp): refused beyond the machine's memory,
// announced when it takes seconds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "flowtrack/nf/config_memory.hpp"
#include "flowtrack/nf/config_text.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/util/available_memory.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

// The ConfigError the bounds give `text` (named "bounds.toml"), or "" when it is within them.
std::string bounds_error(const std::string& text) {
  try {
    check_config_bounds({"bounds.toml", text});
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

std::string repeated(const std::string& piece, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += piece;
  return out;
}

TEST(ConfigBounds, DeepNestingIsRefusedWithItsLineBeforeTheParser) {
  // An array 100,000 deep, one bracket a line (TOML lets arrays span lines): the 33rd opens on line 33.
  const std::string nested = "a = " + repeated("[\n", 100'000) + repeated("]\n", 100'000);
  EXPECT_EQ(bounds_error(nested), "bounds.toml:33: nested more than 32 deep (arrays, inline tables and dotted keys count)");
  // Inline tables, a dotted key, a table header's dotted name.
  EXPECT_NE(bounds_error("x = 1\na = " + repeated("{b = ", 33) + "1" + repeated("}", 33) + "\n").find("bounds.toml:2: nested"),
            std::string::npos);
  EXPECT_NE(bounds_error("\n\na" + repeated(".a", 33) + " = 1\n").find("bounds.toml:3: nested"), std::string::npos);
  EXPECT_NE(bounds_error("[a" + repeated(" . a", 40) + "]\n").find("bounds.toml:1: nested"), std::string::npos);
  // The whole loader refuses it the same way: the parser never sees it.
  try {
    load_stateful_lb_config(ConfigText{"deep.toml", nested});
    ADD_FAILURE() << "a nesting 100,000 deep loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.toml:33: nested more than 32 deep"), std::string::npos) << e.what();
  }
}

// The parser's time grows with each value's line: a line is at most 1 KiB. The nestings of the
// report, on one line (arrays 100,000 deep, inline tables 20,000 deep), are refused as lines.
TEST(ConfigBounds, ALongLineIsRefusedWithItsLength) {
  EXPECT_EQ(bounds_error("x = 1\na = " + repeated("[", 100'000) + repeated("]", 100'000) + "\n"),
            "bounds.toml:2: a line of 200004 bytes: at most 1024 (an array may span lines)");
  EXPECT_NE(bounds_error("a = " + repeated("{b = ", 20'000) + "1" + repeated("}", 20'000)).find("bounds.toml:1: a line of 120005 bytes"),
            std::string::npos);
  EXPECT_EQ(bounds_error("# " + std::string(1022, 'x') + "\n"), "");
  EXPECT_NE(bounds_error("# " + std::string(1023, 'x') + "\n"), "");
}

TEST(ConfigBounds, NestingUpToTheBoundIsTheParsersToJudge) {
  EXPECT_EQ(bounds_error("a = " + repeated("[", 32) + repeated("]", 32) + "\n"), "");
  EXPECT_NE(bounds_error("a = " + repeated("[", 33) + repeated("]", 33) + "\n"), "");
  EXPECT_EQ(bounds_error("a" + repeated(".a", 32) + " = 1\n"), "");
  // Sections one after another do not add up: each closes before the next.
  EXPECT_EQ(bounds_error(repeated("[[service.backend]]\nname = \"x\"\nweight = 1.5\n", 100)), "");
}

TEST(ConfigBounds, BracketsInStringsAndCommentsDoNotCount) {
  const std::string many = repeated("[{", 40);
  for (const std::string& text : {"a = \"" + many + "\"\n", "a = '" + many + "'\n", "# " + many + "\n",
                                  "a = \"\"\"\n" + many + "\n\"\"\"\n", "a = '''" + many + "'''\n",
                                  "a = \"\\\"" + many + "\"\n",             // an escaped quote does not end the string
                                  "a = \"\"\"x\"\"\"\" # " + many + "\n",    // four quotes close a multi-line string
                                  "a = '''x''''' # " + many + "\n",          // and five
                                  "a.\"" + many + "\".b = 1\n"}) {           // a quoted part of a dotted key
    EXPECT_EQ(bounds_error(text), "") << text;
  }
  // ... and what follows a string is counted again: a multi-line string closed by five quotes, then
  // an array nested past the bound.
  EXPECT_NE(bounds_error("a = [\"\"\"x\"\"\"\"\", " + repeated("[", 40) + repeated("]", 41) + "\n"), "");
}

// TOML is UTF-8 text; the parser here reads out of bounds on an invalid sequence in a literal string.
TEST(ConfigBounds, ATextThatIsNotUtf8IsRefusedWithItsLine) {
  EXPECT_EQ(bounds_error("a = 1\nb = 'C:\\\xff'\n"), "bounds.toml:2: not UTF-8 text (byte 15 of the file)");
  for (const char* bad : {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    EXPECT_NE(bounds_error(std::string("a = \"") + bad + "\"\n").find("bounds.toml:1: not UTF-8 text"), std::string::npos) << bad;
  }
  EXPECT_EQ(bounds_error("name = \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\" # \xf4\x8f\xbf\xbf\n"), "");
  try {
    load_nat_config(ConfigText{"nat.toml", "[nat]\ninside = '10.0.0.0/16\xff'\npool = \"203.0.113.1\"\n"});
    ADD_FAILURE() << "invalid UTF-8 loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "nat.toml:2: not UTF-8 text (byte 28 of the file)");
  }
}

TEST(ConfigBounds, ATextLongerThanTheBoundIsRefused) {
  const std::string text = repeated("# " + std::string(61, 'x') + "\n", kMaxConfigBytes / 64) + "a = 1\n";
  EXPECT_EQ(bounds_error(text), "bounds.toml: 1048582 bytes: a configuration is at most 1048576 bytes (1 MiB)");
  const std::string path = test::temp_config("long.toml", text);
  try {
    read_config_file(path);
    ADD_FAILURE() << "a file over the bound was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": more than 1048576 bytes: a configuration is at most 1048576 bytes (1 MiB)");
  }
}

TEST(ConfigRead, ADirectoryIsRefusedByName) {
  const std::string dir = std::filesystem::path(test::temp_config("probe.toml", "")).parent_path().string();
  try {
    read_config_file(dir);
    ADD_FAILURE() << "a directory was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": a directory, not a configuration file");
  }
  try {
    read_config_file(dir + "/no-such.toml");
    ADD_FAILURE() << "a missing file was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/no-such.toml: cannot open: No such file or directory");
  }
}

// A pipe cannot seek: it is read to its end, as `--config <(cat lb.toml)` gives it.
TEST(ConfigRead, APipeIsReadWhole) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const std::string text = "[lb]\nmax_connections = 1000\n";
  ASSERT_EQ(::write(ends[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(ends[1]);
  const ConfigText read = read_config_file("/proc/self/fd/" + std::to_string(ends[0]));
  ::close(ends[0]);
  EXPECT_EQ(read.text, text);
}

// 64 instances of 65,536 services with Maglev tables of 2^24 entries: 2^48 bytes, more than any machine has.
TEST(ConfigFootprint, MoreThanTheMachineHasIsRefusedWithBothFigures) {
  StatelessLbConfig config;
  config.maglev_size = 16777213;
  config.services.assign(kMaxServices, ServiceConfig{"web", 1, 80, 6, {{"b", 2, 0, 1}}});
  const Footprint footprint = stateless_lb_footprint(config, 64);
  EXPECT_GT(footprint.bytes, available_memory_bytes());
  EXPECT_EQ(footprint.what, "64 instances of 65536 services with Maglev tables of 16777213 entries");
  try {
    check_footprint(footprint, "slb.toml");
    ADD_FAILURE() << "a footprint of " << footprint.bytes << " bytes passed";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("slb.toml: 64 instances of 65536 services with Maglev tables of 16777213 entries would take about ", 0), 0u)
        << message;
    // The machine's figure moves from one reading to the next: its form only.
    EXPECT_NE(message.find(" GiB; this machine has "), std::string::npos) << message;
    EXPECT_NE(message.find(" available (MemAvailable)"), std::string::npos) << message;
  }
}

TEST(ConfigFootprint, ServicesOfOnePoolFillOneTableAndLargeBuildsAreSlow) {
  StatefulLbConfig config;
  config.maglev_size = 16777213;
  config.max_connections = 1000;
  const ServiceConfig web{"web", 1, 80, 6, {{"b1", 2, 0, 1}, {"b2", 3, 0, 2}}};
  config.services = {web, web, web};
  config.services[2].backends[1].weight = 3;  // another pool: its own table
  const Footprint footprint = stateful_lb_footprint(config, 2);
  EXPECT_EQ(footprint.maglev_entries, 2u * 2 * 16777213);
  EXPECT_GE(footprint.bytes, 2u * 3 * 16777213 * 4);
  EXPECT_TRUE(builds_slowly(footprint));
  config.maglev_size = 65537;
  EXPECT_FALSE(builds_slowly(stateful_lb_footprint(config, 2)));
  // Each scheduled change refills its service's table: 4,200 of them on 65537 entries are announced.
  config.changes.assign(4200, PoolChange{});
  const Footprint scheduled = stateful_lb_footprint(config, 1);
  EXPECT_EQ(scheduled.maglev_entries, 2u * 65537 + 4200u * 65537);
  EXPECT_TRUE(builds_slowly(scheduled));
  EXPECT_NE(scheduled.what.find(", 4200 pool changes"), std::string::npos) << scheduled.what;
  config.changes.clear();
  config.max_connections = 1 << 24;
  EXPECT_TRUE(builds_slowly(stateful_lb_footprint(config, 1)));
  NatConfig nat;
  EXPECT_FALSE(builds_slowly(nat_footprint(nat, 1)));
  nat.max_sessions = 1 << 24;
  EXPECT_TRUE(builds_slowly(nat_footprint(nat, 1)));
  EXPECT_NO_THROW(check_footprint(nat_footprint(NatConfig{}, 1), "nat.toml"));
}

}  // namespace
}  // namespace flowtrack
