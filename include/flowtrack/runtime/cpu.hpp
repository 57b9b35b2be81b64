// The machine's cores, as the engine pins its threads to them.
#pragma once

#include <optional>
#include <vector>

namespace flowtrack {

// Cores this process may run on.
unsigned usable_cpus();

// Pins the calling thread to the cpu-th usable core (wrapping around); false when the OS refused.
bool pin_current_thread(unsigned cpu);

// Pins the calling thread to the CPU numbered `cpu_id` by the OS; false when the OS refused.
bool pin_current_thread_to_cpu_id(unsigned cpu_id);

// Lets the calling thread run on every core the process could run on when it started (undoes a pin, such
// as the one DPDK's EAL gives the thread that starts it).
void unpin_current_thread();

// Where each worker of the engine runs (runtime/worker_threads.hpp):
//  - none: where the OS puts it;
//  - consecutive: worker w on the (first + w)-th usable core, wrapping around (replay runs: a dispatcher
//    on core 0 puts the workers from 1);
//  - listed: worker w on CPU id cpus[w % cpus.size()] (live runs: the EAL's lcores, `-l`).
struct PinPolicy {
  enum class Kind : unsigned char { none, consecutive, listed };
  Kind kind = Kind::consecutive;
  unsigned first = 0;
  std::vector<unsigned> cpus;

  static PinPolicy unpinned() { return {Kind::none, 0, {}}; }
  static PinPolicy from_core(unsigned first) { return {Kind::consecutive, first, {}}; }
  static PinPolicy on_cpus(std::vector<unsigned> cpu_ids) { return {Kind::listed, 0, std::move(cpu_ids)}; }

  // Pins the calling thread, as worker `worker`; false when the OS refused (or the policy is none).
  bool pin(unsigned worker) const;
};

}  // namespace flowtrack
