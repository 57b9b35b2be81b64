#include "flowtrack/sched/service_costs.hpp"

#include <array>

namespace flowtrack {

std::span<const ServiceCost> paper_services() {
  static constexpr std::array<ServiceCost, 4> kServices = {{
      {"ipsec-encrypt", 3.7, 0.23},
      {"ip-forward", 0.5, 0.0},
      {"firewall", 3.53, 0.0},
      {"ipsec-decrypt-scan", 5.8, 0.21},
  }};
  return kServices;
}

Picos processing_time(const ServiceCost& service, std::uint32_t bytes) {
  return micros_to_picos(service.base_us + static_cast<double>(bytes) / 64.0 * service.per_64_bytes_us);
}

}  // namespace flowtrack
