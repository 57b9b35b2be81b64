// Several stateful LB instances of one deployment (ECMP spreads a connection's packets over them):
// with the same deployment key and the same pool, reached by different configurations and histories,
// they give every new connection the same backend, and one that never saw a connection's SYN sends its
// next packets where the instance that did sent them; another key gives other choices; the offline
// prediction (`flowtrack choices`) is what an instance does; and the configurations that cannot agree
// (another policy, Concury) are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/consistent_choices.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "nf/lb_rig.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace instance_agreement_test {

using namespace lb_rig;
using namespace tcpflag;

DeploymentKey key_of(std::string_view secret) {
  return DeploymentKey(std::span(reinterpret_cast<const std::uint8_t*>(secret.data()), secret.size()));
}

// web-i at 10.1.0.(i+1):8443, as lb_rig's web_service names them.
BackendConfig web_backend_config(std::uint32_t i, std::uint32_t weight) {
  return {"web-" + std::to_string(i), to_network32(0x0a010000 + i + 1), to_network16(8443), weight};
}

PoolChange change(PoolAction action, std::uint32_t i, std::uint32_t weight = 1) {
  return {0, "web", action, web_backend_config(i, weight)};
}

// One instance: service "web" configured with `backends` (index, weight), in that order, then `history`.
struct Instance {
  StatefulLbConfig config;
  std::vector<PoolChange> history;
};

Instance instance(std::vector<std::pair<std::uint32_t, std::uint32_t>> backends, std::vector<PoolChange> history,
                  std::string_view secret) {
  Instance in{lb_config(LbPolicy::maglev, 16384), std::move(history)};
  in.config.maglev_size = 4099;
  in.config.services[0].backends.clear();
  for (const auto& [i, weight] : backends) in.config.services[0].backends.push_back(web_backend_config(i, weight));
  if (!secret.empty()) in.config.deployment_key = key_of(secret);
  return in;
}

Lb start(const Instance& in) {
  Lb lb(in.config);
  for (const PoolChange& c : in.history) lb.apply(c);
  return lb;
}

// Both reach the pool web-0 (weight 1), web-2 (3), web-3 (2), web-4 (1), web-5 down, web-1 gone.
constexpr std::string_view kSecret = "the deployment's shared secret";
Instance first(std::string_view secret = kSecret) {
  return instance({{0, 1}, {1, 1}, {2, 3}, {3, 1}, {5, 1}},
                  {change(PoolAction::remove, 1), change(PoolAction::weight, 3, 2), change(PoolAction::add, 4),
                   change(PoolAction::down, 5)},
                  secret);
}
Instance second(std::string_view secret = kSecret) {
  return instance({{3, 2}, {2, 1}, {0, 1}},
                  {change(PoolAction::add, 5), change(PoolAction::add, 1), change(PoolAction::add, 4), change(PoolAction::weight, 2, 3),
                   change(PoolAction::down, 5), change(PoolAction::remove, 1)},
                  secret);
}

constexpr std::uint32_t kTuples = 10'000;
FlowKeyV4 client_tuple(std::uint32_t n) {
  return FlowKeyV4::from_host(kClient + n % 97, kVip, static_cast<std::uint16_t>(10'000 + n), 443, ipproto::kTcp);
}

TEST(InstanceAgreement, DifferentlyOrderedConfigurationsAndHistoriesChooseAlikeOnEveryTuple) {
  Lb a = start(first());
  Lb b = start(second());
  std::uint32_t agree = 0;
  for (std::uint32_t n = 0; n < kTuples; ++n) {
    agree += run(a, client_tuple(n), kSyn).key.dst_addr == run(b, client_tuple(n), kSyn).key.dst_addr;
  }
  EXPECT_EQ(agree, kTuples);
  EXPECT_EQ(web_backend(a, "web-5").connections, 0u);  // down: no new connection in either
  EXPECT_EQ(web_backend(b, "web-5").connections, 0u);
}

// The failover: a connection opened through one instance continues through the other, which sees its
// packets without its SYN (non_syn_first = consistent, the default) and sends them to the same backend.
TEST(InstanceAgreement, AConnectionOpenedThroughOneInstanceContinuesThroughTheOther) {
  Lb a = start(first());
  Lb b = start(second());
  for (std::uint32_t n = 0; n < 2000; ++n) {
    const std::uint32_t opened_to = run(a, client_tuple(n), kSyn).key.dst_addr;
    ASSERT_EQ(run(b, client_tuple(n), kAck, 0, 100).key.dst_addr, opened_to) << n;
  }
}

// Two independent choices by the shares (1, 3, 2, 1)/7 disagree with probability 1 - sum of the squared
// shares, 34/49: what a deployment whose instances hold different keys (or none) would break.
TEST(InstanceAgreement, AnotherKeyChoosesOtherwiseAsOftenAsChanceSays) {
  Lb a = start(first());
  Lb other = start(second("another deployment's secret"));
  Lb unkeyed = start(second(""));
  std::uint32_t differ = 0, differ_unkeyed = 0;
  for (std::uint32_t n = 0; n < kTuples; ++n) {
    const std::uint32_t chosen = run(a, client_tuple(n), kSyn).key.dst_addr;
    differ += run(other, client_tuple(n), kSyn).key.dst_addr != chosen;
    differ_unkeyed += run(unkeyed, client_tuple(n), kSyn).key.dst_addr != chosen;
  }
  EXPECT_NEAR(differ / double(kTuples), 34.0 / 49.0, 0.03);
  EXPECT_NEAR(differ_unkeyed / double(kTuples), 34.0 / 49.0, 0.03);
}

TEST(InstanceAgreement, TheOfflineChoicesAreTheInstancesOwn) {
  for (const Instance& in : {first(), second(), second("")}) {
    Lb lb = start(in);
    const ConsistentChoices choices(in.config, in.history);
    for (std::uint32_t n = 0; n < 2000; ++n) {
      const ConsistentChoices::Choice c = choices.choose(client_tuple(n));
      ASSERT_NE(c.backend, nullptr);
      ASSERT_EQ(run(lb, client_tuple(n), kSyn).key.dst_addr, c.backend->config.address) << n;
    }
  }
  const ConsistentChoices choices(first().config, first().history);
  EXPECT_EQ(choices.choose(FlowKeyV4::from_host(kClient, kVip + 1, 1, 443, ipproto::kTcp)).service, nullptr);
}

TEST(InstanceAgreement, OnlyMaglevChoosesAlikeTheOtherPoliciesAndConcuryAreRefused) {
  StatefulLbConfig config = first().config;
  config.policy = LbPolicy::round_robin;
  EXPECT_THROW(Lb{config}, std::invalid_argument);
  EXPECT_THROW(ConsistentChoices(config, {}), std::invalid_argument);
  config.policy = LbPolicy::maglev;
  EXPECT_THROW(ConcuryLb{config}, std::invalid_argument);
  // A history that does not fit the pool is refused, naming the change.
  try {
    ConsistentChoices(config, std::vector<PoolChange>{change(PoolAction::drain, 7)});
    ADD_FAILURE() << "a drain of a backend the pool lacks was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("change 1: backend"), std::string::npos) << e.what();
  }
}

// [lb] deployment_key: the file read as the configuration loads; refused with another policy, or when
// the file is not fit, naming the key's line and the file, never its content.
TEST(InstanceAgreement, TheConfigurationReadsTheKeyFileAndRefusesWhatCannotAgree) {
  const std::string key = test::temp_config("deployment.key", std::string(kSecret));
  std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto config = [&](const std::string& lb) {
    return test::temp_config("agree.toml", "[lb]\n" + lb +
                                               "\n[[service]]\nname = \"web\"\nvip = \"198.18.0.1\"\nport = 443\n"
                                               "[[service.backend]]\nname = \"b1\"\naddress = \"10.10.2.11\"\n");
  };
  const auto error_of = [](const std::string& path) -> std::string {
    try {
      load_stateful_lb_config(path);
      return "";
    } catch (const ConfigError& e) {
      return e.what();
    }
  };
  const StatefulLbConfig loaded = load_stateful_lb_config(config("deployment_key = \"" + key + "\""));
  ASSERT_TRUE(loaded.deployment_key.has_value());
  EXPECT_EQ(loaded.deployment_key->fingerprint(), key_of(kSecret).fingerprint());
  EXPECT_FALSE(load_stateful_lb_config(config("")).deployment_key.has_value());

  const std::string other_policy = error_of(config("policy = \"least_connections\"\ndeployment_key = \"" + key + "\""));
  EXPECT_NE(other_policy.find("agree.toml:3: lb.deployment_key: instances choose alike by maglev only; policy least_connections"),
            std::string::npos)
      << other_policy;
  std::filesystem::permissions(key, std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  const std::string readable = error_of(config("deployment_key = \"" + key + "\""));
  EXPECT_NE(readable.find("agree.toml:2: lb.deployment_key: deployment key " + key + ": others than its owner"), std::string::npos)
      << readable;
  EXPECT_EQ(readable.find(kSecret), std::string::npos);
}

}  // namespace instance_agreement_test
}  // namespace flowtrack
