#include "flowtrack/runtime/cpu.hpp"

#include <pthread.h>
#include <sched.h>

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

// The cores the process may use, read once: at its first use, before anything pinned a thread (the
// static is initialised when main() starts, see below).
const std::vector<int>& process_cpus() {
  static const std::vector<int> cpus = allowed_cpus();
  return cpus;
}
[[maybe_unused]] const bool read_at_start = !process_cpus().empty();

bool pin_to_set(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int cpu : cpus) CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace

unsigned usable_cpus() {
  const auto& cpus = process_cpus();
  return cpus.empty() ? 1u : static_cast<unsigned>(cpus.size());
}

bool pin_current_thread(unsigned cpu) {
  const auto& cpus = process_cpus();
  if (cpus.empty()) return false;
  return pin_to_set({cpus[cpu % cpus.size()]});
}

bool pin_current_thread_to_cpu_id(unsigned cpu_id) {
  if (cpu_id >= CPU_SETSIZE) return false;
  return pin_to_set({static_cast<int>(cpu_id)});
}

void unpin_current_thread() { pin_to_set(process_cpus()); }

bool PinPolicy::pin(unsigned worker) const {
  switch (kind) {
    case Kind::none: return false;
    case Kind::consecutive: return pin_current_thread(first + worker);
    case Kind::listed: return !cpus.empty() && pin_current_thread_to_cpu_id(cpus[worker % cpus.size()]);
  }
  return false;
}

}  // namespace flowtrack
