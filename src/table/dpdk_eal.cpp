#include "flowtrack/table/dpdk_eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>

#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace flowtrack {

void ensure_dpdk_eal() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* memory = std::getenv("FLOWTRACK_DPDK_MEMORY_MB");
    std::vector<std::string> args = {"flowtrack", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
                                     "-l", "0", "--log-level=error", "-m", memory != nullptr ? memory : "4096"};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
      throw std::runtime_error(fmt::format("DPDK EAL initialisation failed: {}", rte_strerror(rte_errno)));
    }
  });
}

}  // namespace flowtrack
