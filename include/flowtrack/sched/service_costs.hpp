// What a packet costs a core in the simulator: the paper's per-service processing times (measured
// there on a 1 GHz in-order core) and its two locality penalties.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "flowtrack/sched/picos.hpp"

namespace flowtrack {

struct ServiceCost {
  std::string_view name;
  double base_us;           // per packet
  double per_64_bytes_us;   // per 64 bytes of packet, prorated (the formula is linear in the size)
};

// S1 IPsec encrypt (3.7 + size/64 x 0.23 us), S2 IP forwarding (0.5 us), S3 firewall / malware scan
// (3.53 us), S4 IPsec decrypt + scan (5.8 + size/64 x 0.21 us): Paths 1 to 4 of the paper.
std::span<const ServiceCost> paper_services();

// The size is the packet's length on the wire (the frame, as the trace records it).
Picos processing_time(const ServiceCost& service, std::uint32_t bytes);

struct Penalties {
  // Paid by a packet processed on another core than its flow's previous packet (the flow's state is
  // cold there: four data-cache misses). The first packet of a flow pays nothing.
  Picos flow_migration = micros_to_picos(0.8);
  // Paid by a packet of another service than the previous packet its core processed (the core's
  // instruction cache holds one program). A core's first packet pays it unless the core starts
  // dedicated to that service.
  Picos service_switch = micros_to_picos(10);
};

}  // namespace flowtrack
