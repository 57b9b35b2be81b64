// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, not reflected, no final xor; check value
// 0x29B1 on "123456789"): the hash LAPS uses to index its flow-to-core map table.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

std::uint16_t crc16_ccitt_false(std::span<const std::uint8_t> bytes);

// Over the key's 5-tuple bytes (padding excluded).
std::uint16_t crc16_flow(const FlowKeyV4& key);
std::uint16_t crc16_flow(const FlowKeyV6& key);

}  // namespace flowtrack
