// A SYN flood mixed into a trace, for `bench nf --syn-flood N`: what a load balancer's new-connection
// limit (nf/new_connection_limiter.hpp) is measured against.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/backend_pool.hpp"

namespace flowtrack::cli {

// `trace` with `count` TCP SYNs added, each from a random address of 100.64.0.0/10 (shared address
// space: no campus client) and port to the VIP and port of a random TCP service of `services`, at times
// drawn uniformly over the trace's span, merged in time order. Every draw comes from `seed`.
PacketStore mix_syn_flood(const PacketStore& trace, std::span<const ServiceConfig> services, std::uint64_t count,
                          std::uint64_t seed = 1);

}  // namespace flowtrack::cli
