// `flowtrack bench nf --nat-sync-events` as a user measures what a NAT pair costs its active: every NAT
// configuration with the wheel aging runs without and with its sync events made (into a sink that
// discards them), and the row with them is set against the row without, paired, in the same run. The
// events are really made: at least one for every session the NAT opened (its opening), none without.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>

#include "support/cli_runner.hpp"

namespace flowtrack {
namespace bench_nat_sync_cli_test {

TEST(BenchNatSyncCli, TheNatWithItsSyncEventsAgainstTheNatWithout) {
  const auto r = testing::run_cli("bench nf --nfs nat --tables cuckoo --scalings sharded --workers 1 --burst 32 --flows 1000 "
                                  "--windows 1 --reps 2 --no-stages --nat-sync-events --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<bool, nlohmann::json> rows;  // by nat_sync_events
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    if (j.contains("nf")) rows[j["nat_sync_events"].get<bool>()] = j;
  }
  ASSERT_EQ(rows.size(), 2u) << r.output;
  const nlohmann::json& without = rows.at(false);
  const nlohmann::json& with = rows.at(true);
  EXPECT_EQ(without["sync_events"].get<std::uint64_t>(), 0u) << without.dump();
  EXPECT_FALSE(without.contains("cycles_vs_no_sync_events")) << without.dump();
  EXPECT_GE(with["sync_events"].get<std::uint64_t>(), with["live_connections"].get<std::uint64_t>()) << with.dump();
  EXPECT_GT(with["live_connections"].get<std::uint64_t>(), 0u) << with.dump();
  EXPECT_GT(with.value("cycles_vs_no_sync_events", 0.0), 0) << with.dump();
  EXPECT_EQ(with["live_connections"], without["live_connections"]) << "the events change nothing the NAT does";
  EXPECT_EQ(with["drops"], without["drops"]);
}

TEST(BenchNatSyncCli, RefusedWithoutTheNatOrTheWheel) {
  for (const char* args : {"--nfs lb --nat-sync-events", "--nfs nat --agings heap --nat-sync-events"}) {
    const auto r = testing::run_cli(std::string("bench nf --tables cuckoo --workers 1 --flows 100 --windows 1 --reps 1 ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("--nat-sync-events"), std::string::npos) << r.output;
  }
}

}  // namespace bench_nat_sync_cli_test
}  // namespace flowtrack
