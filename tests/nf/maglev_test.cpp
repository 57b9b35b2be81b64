// Maglev's lookup table: prime size, full with no holes, deterministic, weights met, and minimal
// disruption when a backend leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "flowtrack/nf/maglev.hpp"

namespace flowtrack {
namespace {

std::vector<MaglevTable::Backend> pool(std::size_t n) {
  std::vector<MaglevTable::Backend> backends;
  for (std::size_t i = 0; i < n; ++i) backends.push_back({"backend-" + std::to_string(i), 1});
  return backends;
}

std::map<std::string, std::size_t> shares(const MaglevTable& table, const std::vector<MaglevTable::Backend>& backends) {
  std::map<std::string, std::size_t> count;
  for (const std::uint32_t b : table.entries()) count[backends.at(b).name]++;
  return count;
}

TEST(Maglev, SizeMustBePrime) {
  EXPECT_THROW(MaglevTable(65536), std::invalid_argument);
  EXPECT_THROW(MaglevTable(1), std::invalid_argument);
  EXPECT_NO_THROW(MaglevTable(65537));
  EXPECT_EQ(MaglevTable().size(), 65537u);
}

TEST(Maglev, EmptyPoolAnswersNoBackend) {
  MaglevTable table(251);
  table.populate({});
  for (std::uint32_t h = 0; h < 1000; ++h) EXPECT_EQ(table.lookup(h), MaglevTable::kNoBackend);
  const std::vector<MaglevTable::Backend> drained = {{"a", 0}, {"b", 0}};
  table.populate(drained);
  EXPECT_EQ(table.lookup(7), MaglevTable::kNoBackend);
}

TEST(Maglev, OneBackendFillsTheTable) {
  MaglevTable table(251);
  const auto one = pool(1);
  table.populate(one);
  for (const std::uint32_t b : table.entries()) EXPECT_EQ(b, 0u);
}

TEST(Maglev, FullNoHolesEvenSharesDeterministic) {
  MaglevTable table;
  const auto backends = pool(10);
  table.populate(backends);
  for (const std::uint32_t b : table.entries()) ASSERT_LT(b, 10u);
  for (const auto& [name, count] : shares(table, backends)) {
    EXPECT_NEAR(static_cast<double>(count), 6553.7, 0.01 * 65537) << name;
  }
  MaglevTable again;
  again.populate(backends);
  EXPECT_TRUE(std::equal(table.entries().begin(), table.entries().end(), again.entries().begin()));
}

// Instances that list one pool in different orders (configuration order, `ctl add` order) give every
// entry to the same backend name: the table is a function of the names and weights alone.
TEST(Maglev, TheListingOrderChangesNoEntrysOwner) {
  const std::vector<MaglevTable::Backend> listed = {{"d", 4}, {"a", 1}, {"c", 3}, {"e", 1}, {"b", 2}};
  MaglevTable table(4099);
  table.populate(listed);
  std::vector<MaglevTable::Backend> reordered = listed;
  for (int shuffle = 0; shuffle < 8; ++shuffle) {
    std::ranges::next_permutation(reordered, [](const auto& x, const auto& y) { return x.name < y.name; });
    MaglevTable other(4099);
    other.populate(reordered);
    std::size_t same = 0;
    for (std::uint32_t e = 0; e < table.size(); ++e) same += listed[table.entries()[e]].name == reordered[other.entries()[e]].name;
    EXPECT_EQ(same, table.size()) << "listing " << shuffle;
  }
}

TEST(Maglev, WeightsAreMetWithinOnePercentOfTheTable) {
  MaglevTable table;
  const std::vector<MaglevTable::Backend> backends = {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}};
  table.populate(backends);
  const auto count = shares(table, backends);
  for (const auto& b : backends) {
    EXPECT_NEAR(static_cast<double>(count.at(b.name)), 65537.0 * b.weight / 10.0, 0.01 * 65537) << b.name;
  }
}

TEST(Maglev, RemovingOneOfNBackendsMovesAboutOneNth) {
  constexpr std::size_t kN = 10;
  MaglevTable before, after;
  const auto backends = pool(kN);
  auto fewer = backends;
  fewer.erase(fewer.begin() + 3);
  before.populate(backends);
  after.populate(fewer);
  std::size_t changed = 0, orphaned = 0;
  for (std::uint32_t e = 0; e < before.size(); ++e) {
    const std::string& old_owner = backends[before.entries()[e]].name;
    const std::string& new_owner = fewer[after.entries()[e]].name;
    if (old_owner != new_owner) ++changed;
    if (old_owner == "backend-3") ++orphaned;
  }
  // The removed backend's entries must move; the paper reports few others do.
  EXPECT_GE(changed, orphaned);
  EXPECT_LE(static_cast<double>(changed) / before.size(), 1.0 / kN + 0.03);
}

}  // namespace
}  // namespace flowtrack
