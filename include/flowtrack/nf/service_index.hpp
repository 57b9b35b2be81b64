// A load balancer's services by the endpoint their clients address: (VIP, port, protocol) -> the
// service's index in the order the services were added. When two services are added at one endpoint
// the first answers for it.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

class ServiceIndex {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  // Adds `service` at the next index (0 for the first).
  void add(const ServiceConfig& service) { index_.try_emplace(endpoint_key(service.vip, service.port, service.protocol), added_++); }
  void clear() {
    index_.clear();
    added_ = 0;
  }

  // The service at (address, port, protocol), in network order as flow keys hold them; kNone for none.
  std::uint32_t find(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const {
    const auto it = index_.find(endpoint_key(address, port, protocol));
    return it == index_.end() ? kNone : it->second;
  }
  bool contains(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const {
    return find(address, port, protocol) != kNone;
  }

 private:
  absl::flat_hash_map<std::uint64_t, std::uint32_t> index_;  // endpoint_key(vip, port, protocol) -> index
  std::uint32_t added_ = 0;
};

}  // namespace flowtrack
