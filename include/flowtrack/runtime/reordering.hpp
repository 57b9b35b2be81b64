// Packet reordering across a dispatched run's workers, defined as the simulator defines it
// (sched/simulator.hpp): a packet is out of order when a packet of its flow (the directed 5-tuple) that
// arrived after it was delivered before it. Live, a packet arrives when the dispatcher reads it (the
// trace's order, its slot number) and is delivered when its worker has finished the burst that holds it
// (the monotonic clock, read once per burst: clock_gettime is consistent across cores). Deliveries at the
// same nanosecond count in arrival order (not out of order). Packets that never reached a worker
// (dropped at a full ring) are never delivered, so never out of order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/runtime/packet_tags.hpp"

namespace flowtrack {

struct Delivery {
  std::uint32_t slot;  // arrival rank
  std::int64_t at_ns;  // end of the burst that held it
};

// Per worker, its deliveries that were out of order. `tags[slot]`: the packet's tag (packets that are
// not IP have no flow and are skipped).
std::vector<std::uint64_t> count_out_of_order(std::span<const std::vector<Delivery>> by_worker,
                                              std::span<const PacketTag> tags);

}  // namespace flowtrack
