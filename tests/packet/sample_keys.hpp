// The TCP and UDP connections the parser tests build their frames around.
#pragma once

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack::testing {

inline const FlowKeyV4 kTcpKey = FlowKeyV4::from_host(0x0a000001, 0xc6120005, 40000, 443, ipproto::kTcp);
inline const FlowKeyV4 kUdpKey = FlowKeyV4::from_host(0x0a000002, 0xc6120035, 5353, 53, ipproto::kUdp);

}  // namespace flowtrack::testing
