// libFuzzer target: arbitrary bytes as what a backend's decapsulator receives (nf/tunnel.hpp): an IPIP
// packet from a raw socket, or a GUE payload from a UDP socket. Never a crash or a read past the bytes;
// an inner packet found lies within them and is one whole IPv4 packet (its total length its size).
#include <cstdint>
#include <span>

#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/packet/bytes.hpp"

namespace {

void expect_whole_ipv4(std::span<const std::uint8_t> input, std::span<const std::uint8_t> inner) {
  if (inner.empty()) return;
  if (inner.data() < input.data() || inner.data() + inner.size() > input.data() + input.size()) __builtin_trap();
  if (inner.size() < 20 || (inner[0] >> 4) != 4 || flowtrack::load_be16(inner.data() + 2) != inner.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  expect_whole_ipv4(input, flowtrack::ipip_inner(input));
  expect_whole_ipv4(input, flowtrack::gue_inner(input));
  return 0;
}
