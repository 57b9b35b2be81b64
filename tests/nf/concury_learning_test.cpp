// Concury's learning (nf/concury_learning.hpp): reports of known connections are skipped by its cache
// of known connections exactly when learning them would change nothing, and a forgotten connection is
// learnt again when reported again (the cache never answers for a connection the control plane does
// not know).
#include <gtest/gtest.h>

#include <vector>

#include "flowtrack/nf/concury_learning.hpp"

namespace flowtrack {
namespace {

constexpr Nanos kForgetAfter = 100;

ConcuryLearning make_learning() {
  compact::ConcuryControl control;
  control.add_vip({0, 1, 2}, {1, 1, 1});
  control.add_vip({0, 1}, {1, 1});
  return ConcuryLearning(std::move(control), kForgetAfter);
}

ConcuryLearning::Report report(std::uint32_t service, std::uint64_t key, Nanos at, bool opening = true) {
  return {{service, key, static_cast<std::uint32_t>(key % 4096)}, at, 0, opening};
}

TEST(ConcuryLearning, ReportsOfKnownConnectionsLearnNothingMore) {
  ConcuryLearning learning = make_learning();
  std::vector<ConcuryLearning::Report> reports;
  for (std::uint64_t k = 1; k <= 500; ++k) reports.push_back(report(0, k, 1));
  for (std::uint64_t k = 1; k <= 500; ++k) reports.push_back(report(0, k, 2, false));  // their answers
  for (std::uint64_t k = 1; k <= 500; ++k) reports.push_back(report(1, k, 3));          // another service's
  learning.learn_all(reports);
  EXPECT_EQ(learning.learnt(), 1000u);
  EXPECT_EQ(learning.control().connections(0), 500u);
  EXPECT_EQ(learning.control().connections(1), 500u);
  EXPECT_EQ(learning.new_connections(0, 0), 500u);  // openings only
  for (std::uint64_t k = 1; k <= 500; ++k) ASSERT_EQ(learning.control().dip_of(0, k), learning.control().dip_at(0, k % 4096));
}

TEST(ConcuryLearning, AForgottenConnectionIsLearntAgainWhenReportedAgain) {
  ConcuryLearning learning = make_learning();
  std::vector<ConcuryLearning::Report> reports;
  for (std::uint64_t k = 1; k <= 300; ++k) reports.push_back(report(0, k, 10));
  learning.learn_all(reports);
  EXPECT_EQ(learning.expire(10 + kForgetAfter, 1000), 300u);
  EXPECT_EQ(learning.control().connections(0), 0u);
  for (ConcuryLearning::Report& r : reports) r.at = 200;
  learning.learn_all(reports);  // the same connections: unknown again, so learnt again
  EXPECT_EQ(learning.control().connections(0), 300u);
  EXPECT_EQ(learning.learnt(), 600u);
  EXPECT_EQ(learning.forgotten(), 300u);
  EXPECT_EQ(learning.oldest(), Nanos{200});
}

TEST(ConcuryLearning, AConnectionKeptAtASyncPointIsKnownToLaterReports) {
  ConcuryLearning learning = make_learning();
  learning.control().keep(0, 42, 2);
  learning.kept(report(0, 42, 5));
  learning.learn_all(std::vector{report(0, 42, 6, false)});
  EXPECT_EQ(learning.learnt(), 1u);
  EXPECT_EQ(learning.control().dip_of(0, 42), std::optional<std::uint16_t>{2});
}

}  // namespace
}  // namespace flowtrack
