// `flowtrack bench nf --syn-flood N --new-connection-rate R1,R2` as a user measures the limit: the
// stateful LB runs without a limit and at each limit, on the trace and on the trace with the flood
// mixed in, in one run; each limited row is set against no limit on the same trace and each flooded
// row against the anchor, no limit without the flood. Without a limit the flood fills the tracker
// (its first packets dropped once the table is full); with one, the spoofed SYNs go by without state.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <utility>

#include "support/cli_runner.hpp"

namespace flowtrack {
namespace bench_syn_flood_cli_test {

TEST(BenchSynFloodCli, EachLimitAgainstNoLimitAndEachFloodAgainstTheAnchor) {
  // 1000 connections in one window: a table of 2000; 5000 spoofed SYNs overflow it.
  const auto r = testing::run_cli("bench nf --nfs lb --tables cuckoo --scalings sharded --workers 1 --burst 32 --flows 1000 "
                                  "--windows 1 --reps 2 --no-stages --syn-flood 5000 --new-connection-rate 100,400 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::pair<bool, std::uint64_t>, nlohmann::json> rows;  // by (flooded, limit)
  for (const nlohmann::json& j : testing::json_lines(r.output)) {
    if (!j.contains("nf")) continue;  // the context record
    rows[{j["syn_flood"].get<std::uint64_t>() != 0, j["new_connection_rate"].get<std::uint64_t>()}] = j;
  }
  ASSERT_EQ(rows.size(), 6u) << r.output;  // flooded or not x no limit, 100, 400
  for (const auto& [key, j] : rows) {
    const auto [flooded, limit] = key;
    const std::string line = j.dump();
    EXPECT_EQ(j.contains("cycles_vs_no_limit"), limit != 0) << line;
    EXPECT_EQ(j.contains("cycles_vs_no_flood"), flooded) << line;
    EXPECT_GT(j.value("cycles_vs_no_limit", 1.0), 0) << line;
    EXPECT_GT(j.value("cycles_vs_no_flood", 1.0), 0) << line;
    EXPECT_EQ(j["packets"].get<std::uint64_t>(), rows.at({false, 0})["packets"].get<std::uint64_t>() + (flooded ? 5000 : 0)) << line;
  }
  const nlohmann::json& open = rows.at({true, 0});
  EXPECT_EQ(open["over_rate"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(open["live_connections"].get<std::uint64_t>(), 2000u) << open.dump();  // full
  EXPECT_GT(open["drops"].get<std::uint64_t>(), 0u) << open.dump();
  for (const std::uint64_t limit : {100u, 400u}) {
    const nlohmann::json& limited = rows.at({true, limit});
    EXPECT_GE(limited["over_rate"].get<std::uint64_t>(), 5000u) << limited.dump();  // every spoofed SYN at least
    EXPECT_LT(limited["live_connections"].get<std::uint64_t>(), 1000u) << limited.dump();
    EXPECT_EQ(limited["drops"].get<std::uint64_t>(), 0u) << limited.dump();
  }
}

}  // namespace bench_syn_flood_cli_test
}  // namespace flowtrack
