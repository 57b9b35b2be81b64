// When a bulk lookup should prefetch the lines it is about to read. A prefetch pays only when the line
// would otherwise come from beyond this core's L2: while a structure's randomly read arrays fit in it,
// the lines are there already and a prefetch is an instruction a key for nothing (measured: Concury
// 14 % and the Maglev-style table 8 % more lookups a second at 1K without them; at 256K Concury 30 %
// fewer; docs/performance/compact.md). The lookup structures take the decision when their arrays change size, from the
// bytes that their lookups read at random.
#pragma once

#include <cstddef>

namespace flowtrack::compact {

// True when `bytes` of randomly read arrays exceed half of this core's L2 (512 KiB assumed when the
// system does not say): the other half is left to the rest of a burst's lines (queries, answers, rows).
bool prefetch_pays(std::size_t bytes);

}  // namespace flowtrack::compact
