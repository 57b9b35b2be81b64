#include "flowtrack/table/dpdk_eal.hpp"

#include <pthread.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>

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
    // The EAL pins the calling thread to lcore 0; flowtrack uses DPDK for its tables only and places its
    // own threads, so the caller gets its cores back (threads it starts later inherit them).
    cpu_set_t cores;
    const bool saved = pthread_getaffinity_np(pthread_self(), sizeof(cores), &cores) == 0;
    if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
      throw std::runtime_error(fmt::format("DPDK EAL initialisation failed: {}", rte_strerror(rte_errno)));
    }
    if (saved) pthread_setaffinity_np(pthread_self(), sizeof(cores), &cores);
  });
}

}  // namespace flowtrack
