// A service's backend list (nf/backend_pool.hpp): a backend removed and added back where it was (its
// name, address and port) takes its entry again, with its index, its counts and its share of the
// Maglev table, however often it comes and goes; one added back elsewhere is another server, a new
// entry, and the old one stays removed for the connections it still has.
#include <gtest/gtest.h>

#include <cstdint>

#include "flowtrack/nf/backend_pool.hpp"

namespace flowtrack {
namespace {

ServiceConfig two_backends() {
  ServiceConfig s{"web", to_network32(0xc6120001), to_network16(443), ipproto::kTcp, {}};
  s.backends.push_back({"a", to_network32(0x0a000101), to_network16(8080), 1});
  s.backends.push_back({"b", to_network32(0x0a000102), to_network16(8080), 2});
  return s;
}

TEST(BackendPool, ABackendAddedBackWhereItWasRemovedTakesItsEntryAgain) {
  Service service(two_backends(), 251);
  std::uint32_t choice_before[1000];
  for (std::uint32_t h = 0; h < 1000; ++h) choice_before[h] = service.consistent_choice(h * 2654435761u);
  service.backends()[0].connections = 5;
  for (int round = 0; round < 100; ++round) {
    ASSERT_TRUE(service.remove_backend("a"));
    ASSERT_FALSE(service.backends()[0].takes_new());
    ASSERT_TRUE(service.add_backend({"a", to_network32(0x0a000101), to_network16(8080), 1}));
  }
  ASSERT_EQ(service.backends().size(), 2u);
  EXPECT_TRUE(service.backends()[0].takes_new());
  EXPECT_EQ(service.backends()[0].connections, 5u);  // still on that server
  for (std::uint32_t h = 0; h < 1000; ++h) ASSERT_EQ(service.consistent_choice(h * 2654435761u), choice_before[h]) << h;
}

TEST(BackendPool, ABackendAddedBackElsewhereIsANewEntryAndTheOldOneStaysRemoved) {
  Service service(two_backends(), 251);
  ASSERT_TRUE(service.remove_backend("a"));
  ASSERT_TRUE(service.add_backend({"a", to_network32(0x0a000109), to_network16(8080), 3}));
  ASSERT_EQ(service.backends().size(), 3u);
  EXPECT_FALSE(service.backends()[0].takes_new());
  EXPECT_EQ(service.backends()[0].config.address, to_network32(0x0a000101));
  EXPECT_TRUE(service.backends()[2].takes_new());
  EXPECT_EQ(service.backends()[2].config.weight, 3u);
  EXPECT_FALSE(service.add_backend({"a", to_network32(0x0a000101), to_network16(8080), 1}));  // "a" is in the pool
}

}  // namespace
}  // namespace flowtrack
