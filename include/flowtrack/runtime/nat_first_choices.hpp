// A NAT load whose translations do not depend on the order its mappings are made in.
//
// `trace ports` writes the outside's answers of a NAT load ahead of the run, addressed to the external
// ports a rehearsal of the NAT gave (replay_rehearsal.hpp). Port by port, the port a new mapping gets is
// its inside endpoint's first choice (the inside port when the worker's slice has it, else the first of
// its keyed candidates: port_allocator.hpp) unless another mapping holds it already; then it is a later
// candidate, and which endpoint got there first decides. One worker makes its mappings in the trace's
// order, as the rehearsal does; two workers live do not: their queues interleave as the cores run and
// hand-offs arrive, so where two endpoints of one worker, public address and protocol share a first
// choice, the rehearsal and the run may give them each other's ports, and the answers written for one
// reach the other's mapping or none.
//
// So the load gives every inside endpoint a first choice of its own: walking the trace in order, an
// endpoint whose first choice an earlier one has already is moved to the next inside port (of the same
// address and protocol) that the trace does not use and whose first choice is still free, in every
// packet of it, both ways. Then every mapping gets its first choice in any order (as long as none is
// released during the run: the NAT's shortest timeout, 1 minute, is longer than a measured run), the
// rehearsal and the run give the same ports, and the NAT's work is unchanged: it still draws a port for
// every endpoint its slice's inside port does not fit, and the moved endpoints (a few per cent at 1M
// connections) differ only in their inside port number.
#pragma once

#include <cstddef>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/runtime/packet_owner.hpp"

namespace flowtrack {

struct FirstChoices {
  std::size_t endpoints = 0;  // inside endpoints (address, port or ICMP identifier, protocol) in the trace
  std::size_t moved = 0;      // of them given another inside port
};

// Rewrites `trace` (captured on the NAT's inside, in capture order) so that no two of its inside
// endpoints share a first choice on the worker that owns them (`owner`, of `workers`). The NAT's ports
// must be given port by port (block_size 0): with blocks, std::invalid_argument.
FirstChoices give_each_endpoint_its_first_choice(PacketStore& trace, const NatConfig& config, const PacketOwner& owner,
                                                 unsigned workers);

}  // namespace flowtrack
