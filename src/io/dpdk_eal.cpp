#include "flowtrack/io/dpdk_eal.hpp"
#include "flowtrack/io/dpdk_eal_start.hpp"

#include <pthread.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>

#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace flowtrack {
namespace {

std::mutex eal_mutex;
// Guarded by eal_mutex: rte_eal_init was called (it may run once per process), and why it failed if it did.
bool eal_tried = false;
std::string eal_failure;

// Calls rte_eal_init with "flowtrack" and `args`; the caller holds eal_mutex.
void init_locked(std::vector<std::string> args) {
  eal_tried = true;
  const std::string given = fmt::format("{}", fmt::join(args, " "));
  args.insert(args.begin(), "flowtrack");
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  // The EAL pins the calling thread to its first lcore; flowtrack places its own threads, so the caller
  // gets its cores back (threads it starts later inherit them).
  cpu_set_t cores;
  const bool saved = pthread_getaffinity_np(pthread_self(), sizeof(cores), &cores) == 0;
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
    eal_failure = fmt::format("DPDK EAL initialisation failed on '{}': {}", given, rte_strerror(rte_errno));
    throw std::runtime_error(eal_failure);
  }
  if (saved) pthread_setaffinity_np(pthread_self(), sizeof(cores), &cores);
}

}  // namespace

void ensure_dpdk_eal() {
  std::lock_guard lock(eal_mutex);
  if (eal_tried) {
    if (!eal_failure.empty()) throw std::runtime_error(eal_failure);
    return;
  }
  const char* memory = std::getenv("FLOWTRACK_DPDK_MEMORY_MB");
  init_locked({"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-l", "0", "--log-level=error", "-m",
               memory != nullptr ? memory : "4096"});
}

void start_dpdk_eal(const std::vector<std::string>& args) {
  std::lock_guard lock(eal_mutex);
  if (eal_tried) throw std::runtime_error("DPDK EAL was already started in this process; it starts once");
  init_locked(args);
}

}  // namespace flowtrack
