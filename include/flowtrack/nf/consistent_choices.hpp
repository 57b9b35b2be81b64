// The backend a stateful LB instance's consistent choice gives each connection, computed offline from
// what decides it: the configuration (its services, pool and deployment key) and the pool's history
// since the start (the `flowtrack ctl` changes the instance took, in order). Two instances agree on
// a new connection exactly when their ConsistentChoices do: `flowtrack choices` prints them for a
// list of tuples, so that two instances' configurations and histories can be compared.
//
// Only the maglev policy chooses by the tuple alone; a configuration with another policy is refused.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/deployment_key.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/nf/service_index.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"

namespace flowtrack {

class ConsistentChoices {
 public:
  // Throws std::invalid_argument when the policy is not maglev, or naming the change (its index in
  // `history`) and what is wrong with it when the history does not fit the pool (check_pool_changes).
  ConsistentChoices(const StatefulLbConfig& config, std::span<const PoolChange> history);

  // The service a connection's first packet with this tuple goes to and the backend it gets; a null
  // service when the tuple is to none, a null backend when the service has none taking connections.
  struct Choice {
    const Service* service = nullptr;
    const Backend* backend = nullptr;
  };
  Choice choose(const FlowKeyV4& key) const;

  const std::optional<DeploymentKey>& deployment_key() const { return key_; }

 private:
  std::optional<DeploymentKey> key_;
  std::vector<Service> services_;
  ServiceIndex index_;
};

}  // namespace flowtrack
