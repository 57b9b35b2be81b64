// A trace captured on the clients' side holds every service's answers. A service in tunnel mode has its
// backends send them straight to the clients (nf/tunnel.hpp: direct server return), so they never reach
// the balancer: a replay leaves them out, as it leaves out the answers it cannot present
// (replay_rehearsal.hpp), and reports how many.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/runtime/rss_steering.hpp"

namespace flowtrack::cli {

// Removes from the partition's queues every IPv4 packet that comes from the VIP and port of a service of
// `services` in tunnel mode; returns how many it removed.
std::uint64_t leave_out_direct_returns(const PacketStore& trace, std::span<const ServiceConfig> services,
                                       PacketPartition& partition);

}  // namespace flowtrack::cli
