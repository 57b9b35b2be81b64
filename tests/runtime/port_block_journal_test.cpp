// The port-block journal: its lines read back as written, a bad line is named and skipped, times round
// trip in UTC, the writer appends what the workers' rings hold, and the lookup names the subscriber that
// held a public port at a time (and nobody before its block, after its release, or on another address).
#include <gtest/gtest.h>

#include <fstream>

#include "flowtrack/runtime/port_block_journal_writer.hpp"
#include "flowtrack/runtime/port_block_lookup.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

using Event = PortBlockRecord::Event;

constexpr std::uint32_t kPublicA = 0x017100cb, kPublicB = 0x027100cb;  // 203.0.113.1, .2
constexpr std::uint32_t kAlice = 0x0700000a, kBob = 0x0800000a;        // 10.0.0.7, .8
constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = 1'795'000'000 * kSecond;

PortBlockEntry entry(std::int64_t at, Event event, std::uint32_t inside, std::uint32_t public_addr, std::uint16_t first,
                     std::uint16_t last) {
  return {.unix_ns = at, .event = event, .inside_addr = inside, .public_addr = public_addr, .first_port = first, .last_port = last};
}

TEST(PortBlockJournal, ALineReadsBackAsWritten) {
  const PortBlockEntry e = entry(kT0 + 250'000'001, Event::released, kAlice, kPublicA, 40448, 40959);
  const std::string line = port_block_journal_line(e);
  EXPECT_EQ(line, R"({"time":"2026-11-18T11:06:40.250000001Z","event":"released","inside":"10.0.0.7",)"
                  R"("public":"203.0.113.1","ports":[40448,40959]})");
  std::string error;
  const auto back = parse_port_block_journal_line(line, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(*back, e);
}

TEST(PortBlockJournal, ABadLineIsRefusedWithItsReason) {
  const std::string good = R"("time":"2026-11-18T11:06:40Z","event":"allocated","inside":"10.0.0.7","public":"203.0.113.1")";
  for (const auto& [line, reason] : {
           std::pair<std::string, std::string>{"{" + good + R"(,"ports":[40448,40959])", "not a JSON object"},
           {"[]", "not a JSON object"},
           {"{" + good + R"(,"ports":[40959,40448]})", "'ports'"},
           {"{" + good + R"(,"ports":[0,10]})", "'ports'"},
           {"{" + good + R"(,"ports":[1,65536]})", "'ports'"},
           {"{" + good + R"(,"ports":[1,2],"x":1})", "no other"},
           {R"({"time":"2026-11-18 04:53:20Z","event":"allocated","inside":"10.0.0.7","public":"203.0.113.1","ports":[1,2]})", "'time'"},
           {R"({"time":"2026-11-18T11:06:40Z","event":"taken","inside":"10.0.0.7","public":"203.0.113.1","ports":[1,2]})", "'event'"},
           {R"({"time":"2026-11-18T11:06:40Z","event":"allocated","inside":"10.0.0","public":"203.0.113.1","ports":[1,2]})", "'inside'"},
           {R"({"time":5,"event":"allocated","inside":"10.0.0.7","public":"203.0.113.1","ports":[1,2]})", "'time'"},
       }) {
    std::string error;
    EXPECT_FALSE(parse_port_block_journal_line(line, error)) << line;
    EXPECT_NE(error.find(reason), std::string::npos) << line << ": " << error;
  }
}

TEST(PortBlockJournal, UtcTimesRoundTripAndTakeAnyFractionWidth) {
  EXPECT_EQ(parse_utc_time("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_utc_time("2026-11-18T11:06:40Z"), kT0);
  EXPECT_EQ(parse_utc_time("2026-11-18T11:06:40.5Z"), kT0 + 500'000'000);
  EXPECT_EQ(parse_utc_time("2026-11-18T11:06:40.000000007Z"), kT0 + 7);
  EXPECT_EQ(parse_utc_time(format_utc_time(kT0 + 123'456'789)), kT0 + 123'456'789);
  for (const char* bad : {"2026-11-18T11:06:40", "2026-11-18T11:06:40.Z", "2026-11-18T11:06:40.0000000001Z", "2026-13-18T04:53:20Z",
                          "2026-11-18T24:00:00Z", "20261118T045320Z", "2026-11-18T04:53:2xZ", ""}) {
    EXPECT_FALSE(parse_utc_time(bad)) << bad;
  }
}

TEST(PortBlockJournal, TheWriterAppendsTheRingsRecordsInWallClockTime) {
  const std::string path = test::temp_config("blocks.jsonl", "");
  PortBlockLog log(16);
  ASSERT_TRUE(log.allocated({.time = 5 * kNanosPerSecond, .inside_addr = kAlice, .public_addr = kPublicA, .first_port = 1024,
                             .last_port = 1535, .event = Event::allocated}));
  log.released({.time = 9 * kNanosPerSecond, .inside_addr = kAlice, .public_addr = kPublicA, .first_port = 1024,
                .last_port = 1535, .event = Event::released});
  {
    PortBlockJournalWriter writer(path, false, kT0);
    EXPECT_EQ(writer.drain(log), 2u);
    EXPECT_EQ(writer.drain(log), 0u);
  }
  {
    PortBlockJournalWriter again(path, false, kT0);  // a restart appends
    again.write(std::vector<PortBlockRecord>{{.time = 0, .inside_addr = kBob, .public_addr = kPublicB, .first_port = 1,
                                              .last_port = 2, .event = Event::allocated}});
  }
  const PortBlockJournal journal = read_port_block_journal(path);
  EXPECT_TRUE(journal.problems.empty());
  ASSERT_EQ(journal.entries.size(), 3u);
  EXPECT_EQ(journal.entries[0], entry(kT0 + 5 * kSecond, Event::allocated, kAlice, kPublicA, 1024, 1535));
  EXPECT_EQ(journal.entries[1], entry(kT0 + 9 * kSecond, Event::released, kAlice, kPublicA, 1024, 1535));
  EXPECT_EQ(journal.entries[2].inside_addr, kBob);
}

TEST(PortBlockJournal, AnUnwritableFileIsAnErrorNamingIt) {
  try {
    PortBlockJournalWriter writer("/nonexistent-dir/blocks.jsonl", false, 0);
    ADD_FAILURE() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/blocks.jsonl"), std::string::npos);
  }
}

TEST(PortBlockJournal, ReadingSkipsAndNamesMalformedLines) {
  const std::string good = port_block_journal_line(entry(kT0, Event::allocated, kAlice, kPublicA, 1, 2));
  const std::string path = test::temp_config("mixed.jsonl", good + "\nnot json\n\n" + good + "\n{\"time\":");
  const PortBlockJournal journal = read_port_block_journal(path);
  EXPECT_EQ(journal.entries.size(), 2u);
  ASSERT_EQ(journal.problems.size(), 2u);
  EXPECT_EQ(journal.problems[0].rfind("2: ", 0), 0u) << journal.problems[0];
  EXPECT_EQ(journal.problems[1].rfind("5: ", 0), 0u) << journal.problems[1];
}

TEST(PortBlockLookup, NamesTheHolderAtATimeAndNobodyOutsideItsBlock) {
  const std::vector<PortBlockEntry> entries = {
      entry(kT0, Event::allocated, kAlice, kPublicA, 1024, 1535),
      entry(kT0 + 3 * kSecond, Event::allocated, kBob, kPublicB, 1024, 1535),  // the same ports, another address
      entry(kT0 + 10 * kSecond, Event::released, kAlice, kPublicA, 1024, 1535),
      entry(kT0 + 70 * kSecond, Event::allocated, kBob, kPublicA, 1024, 1535),  // the block, after its quarantine
  };
  const auto at = [&](std::uint32_t address, std::uint16_t port, std::int64_t t) { return who_held(entries, address, port, t); };
  EXPECT_FALSE(at(kPublicA, 1100, kT0 - 1)) << "before any block";
  EXPECT_EQ(at(kPublicA, 1100, kT0), (PortBlockHolding{kAlice, kPublicA, 1024, 1535, kT0, kT0 + 10 * kSecond}));
  EXPECT_EQ(at(kPublicA, 1535, kT0 + 9 * kSecond)->inside_addr, kAlice);
  EXPECT_FALSE(at(kPublicA, 1536, kT0 + 9 * kSecond)) << "past the block";
  EXPECT_FALSE(at(kPublicA, 1100, kT0 + 10 * kSecond)) << "released at that time";
  EXPECT_FALSE(at(kPublicA, 1100, kT0 + 69 * kSecond)) << "in quarantine";
  const auto bob = at(kPublicA, 1100, kT0 + 71 * kSecond);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->inside_addr, kBob);
  EXPECT_FALSE(bob->until_ns) << "still held at the journal's end";
  EXPECT_EQ(at(kPublicB, 1100, kT0 + 9 * kSecond)->inside_addr, kBob);
}

TEST(PortBlockLookup, EntriesInAnyOrderGiveTheSameAnswer) {
  std::vector<PortBlockEntry> entries = {
      entry(kT0 + 10 * kSecond, Event::released, kAlice, kPublicA, 1, 512),
      entry(kT0 + 10 * kSecond, Event::allocated, kBob, kPublicA, 1, 512),  // given again at the same instant
      entry(kT0, Event::allocated, kAlice, kPublicA, 1, 512),
  };
  EXPECT_EQ(who_held(entries, kPublicA, 7, kT0 + 5 * kSecond)->inside_addr, kAlice);
  EXPECT_EQ(who_held(entries, kPublicA, 7, kT0 + 10 * kSecond)->inside_addr, kBob);
  std::reverse(entries.begin(), entries.end());
  EXPECT_EQ(who_held(entries, kPublicA, 7, kT0 + 10 * kSecond)->inside_addr, kBob);
}

}  // namespace
}  // namespace flowtrack
