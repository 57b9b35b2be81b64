#include "flowtrack/runtime/dpdk_threads.hpp"

#include <rte_errno.h>
#include <rte_lcore.h>

#include <fmt/format.h>

#include <stdexcept>

namespace flowtrack {

std::vector<unsigned> eal_lcore_cpus() {
  const auto cpu_of = [](unsigned lcore) { return static_cast<unsigned>(rte_lcore_to_cpu_id(static_cast<int>(lcore))); };
  std::vector<unsigned> cpus{cpu_of(rte_get_main_lcore())};
  for (unsigned lcore = rte_get_next_lcore(-1, 1, 0); lcore < RTE_MAX_LCORE; lcore = rte_get_next_lcore(lcore, 1, 0)) {
    cpus.push_back(cpu_of(lcore));
  }
  return cpus;
}

void register_with_eal() {
  if (rte_thread_register() != 0) {
    throw std::runtime_error(fmt::format("a worker thread could not register with DPDK's EAL: {}", rte_strerror(rte_errno)));
  }
}

void unregister_from_eal() { rte_thread_unregister(); }

}  // namespace flowtrack
