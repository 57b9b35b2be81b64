// The machine's cores, as the runtime pins its threads to them.
#pragma once

namespace flowtrack {

// Cores this process may run on.
unsigned usable_cpus();

// Pins the calling thread to the cpu-th usable core (wrapping around); false when the OS refused.
bool pin_current_thread(unsigned cpu);

}  // namespace flowtrack
