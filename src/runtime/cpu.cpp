#include "flowtrack/runtime/cpu.hpp"

#include <pthread.h>
#include <sched.h>

#include <vector>

namespace flowtrack {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

unsigned usable_cpus() {
  const auto cpus = allowed_cpus();
  return cpus.empty() ? 1u : static_cast<unsigned>(cpus.size());
}

bool pin_current_thread(unsigned cpu) {
  static const std::vector<int> cpus = allowed_cpus();
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus[cpu % cpus.size()], &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace flowtrack
