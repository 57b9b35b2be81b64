#include "flowtrack/nf/consistent_choices.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "flowtrack/hash/crc32c.hpp"

namespace flowtrack {

ConsistentChoices::ConsistentChoices(const StatefulLbConfig& config, std::span<const PoolChange> history)
    : key_(config.deployment_key) {
  if (config.policy != LbPolicy::maglev) {
    throw std::invalid_argument(fmt::format("policy {} chooses per instance, by no function of the tuple: only maglev's choices can be compared",
                                            lb_policy_name(config.policy)));
  }
  if (const auto problem = check_pool_changes(history, config.services, config.maglev_size)) {
    throw std::invalid_argument(fmt::format("change {}: {}: {}", problem->index + 1, problem->key, problem->problem));
  }
  // As the balancer builds them (stateful_lb.hpp), then takes the changes as it would from ctl.
  for (const ServiceConfig& s : config.services) {
    index_.add(s);
    append_service(services_, s, config.maglev_size);
  }
  for (const PoolChange& change : history) apply_pool_change(change, services_);
}

ConsistentChoices::Choice ConsistentChoices::choose(const FlowKeyV4& key) const {
  const std::uint32_t s = index_.find(key.dst_addr, key.dst_port, key.protocol);
  if (s == ServiceIndex::kNone) return {};
  const Service& service = services_[s];
  const std::uint32_t b = service.consistent_choice(choice_hash(key_, key, flow_hash(key)));
  return {&service, b == Service::kNoBackend ? nullptr : &service.backends()[b]};
}

}  // namespace flowtrack
