// The stateful functions as the live data plane runs them (live_service.hpp): on the default connection
// table and timer-wheel aging only (the table and aging choice is measured by `bench nf`). Whatever
// prepares traffic for them (`flowtrack trace ports`) builds the same.
#pragma once

#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/nf/nat_event_ring.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace flowtrack {

using LiveLb = StatefulLb<CuckooTable<FlowKeyV4>, TimerWheel>;
using LiveNat = Nat44<CuckooTable<FlowKeyV4>, TimerWheel>;
// The active of a NAT pair that syncs its state (runtime/nat_pair.hpp): its sessions' events into a ring.
using LivePairedNat = Nat44<CuckooTable<FlowKeyV4>, TimerWheel, NatEventRing>;

}  // namespace flowtrack
