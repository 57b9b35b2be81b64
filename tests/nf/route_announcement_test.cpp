// Which VIPs an instance asks its routing speaker to announce (nf/route_announcement.hpp): those with a
// backend that takes new connections and is not down by its health checks, after the pool's changes.
#include "flowtrack/nf/route_announcement.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <vector>

namespace flowtrack {
namespace {

// Service `name` on `vip`, port 80, with backends `names` (weight 1 each).
ServiceConfig announced_service(const std::string& name, const char* vip, const std::vector<std::string>& names) {
  ServiceConfig s;
  s.name = name;
  s.vip = inet_addr(vip);
  s.port = htons(80);
  for (const std::string& b : names) s.backends.push_back({b, inet_addr("10.0.0.1"), 0, 1});
  return s;
}

PoolChange pool_change(const std::string& service, PoolAction action, const std::string& backend, std::uint32_t weight = 1) {
  return {0, service, action, {backend, inet_addr("10.0.0.9"), 0, weight}};
}

const std::vector<ServiceConfig> kAnnouncedServices = {announced_service("web", "192.0.2.10", {"b1", "b2"}),
                                              announced_service("web", "192.0.2.11", {"b1", "b2"}),
                                              announced_service("dns", "192.0.2.1", {"d1"})};

TEST(RouteAnnouncement, EveryVipWithAHealthyBackendOnceInAddressOrder) {
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, {}, {}),
            (std::vector<std::uint32_t>{inet_addr("192.0.2.1"), inet_addr("192.0.2.10"), inet_addr("192.0.2.11")}));
}

TEST(RouteAnnouncement, AVipGoesWhenNoBackendOfItsServiceTakesNewConnections) {
  const std::vector<std::uint32_t> web_only = {inet_addr("192.0.2.10"), inet_addr("192.0.2.11")};
  // d1 drained, removed, down by ctl, or down by its health checks: dns's VIP goes, web's stay.
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, std::vector{pool_change("dns", PoolAction::drain, "d1")}, {}), web_only);
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, std::vector{pool_change("dns", PoolAction::remove, "d1")}, {}), web_only);
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, std::vector{pool_change("dns", PoolAction::down, "d1")}, {}), web_only);
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, {}, {{"dns", "d1"}}), web_only);
  // One of web's two unhealthy: its VIPs stay; both: they go.
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, {}, {{"web", "b1"}}).size(), 3u);
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, {}, {{"web", "b1"}, {"web", "b2"}}), std::vector<std::uint32_t>{inet_addr("192.0.2.1")});
}

TEST(RouteAnnouncement, AVipComesBackWithABackendThatTakesNewConnectionsAgain) {
  const std::vector<PoolChange> changes = {pool_change("dns", PoolAction::remove, "d1"), pool_change("dns", PoolAction::add, "d2", 0),
                                           pool_change("dns", PoolAction::down, "d2"), pool_change("dns", PoolAction::weight, "d2", 5)};
  // d2 added with weight 0 and down: not yet; weighted but still down: not yet; up: announced.
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, std::span(changes).first(3), {}).size(), 2u);
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, changes, {}).size(), 2u);
  std::vector<PoolChange> up = changes;
  up.push_back(pool_change("dns", PoolAction::up, "d2"));
  EXPECT_EQ(vips_with_a_healthy_backend(kAnnouncedServices, up, {}).size(), 3u);
}

TEST(RouteAnnouncement, TheFileHoldsOneBirdStaticRouteAVip) {
  const std::vector<std::uint32_t> vips = {inet_addr("192.0.2.1"), inet_addr("192.0.2.10")};
  const std::string text = bird_static_routes(vips);
  EXPECT_EQ(text.substr(0, 2), "# ");
  EXPECT_NE(text.find("\nroute 192.0.2.1/32 blackhole;\nroute 192.0.2.10/32 blackhole;\n"), std::string::npos);
  const std::string none = bird_static_routes({});
  EXPECT_EQ(none.find("route"), std::string::npos);
  EXPECT_EQ(none.back(), '\n');
}

}  // namespace
}  // namespace flowtrack
