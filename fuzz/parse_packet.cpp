// libFuzzer target: arbitrary bytes through the parser under every link type (parse_frame's answer checked
// against the general walk's, which it must equal), and, when a frame parses, through every in-place
// rewrite (which trusts the parser's offsets).
#include <cstdint>
#include <vector>

#include "flowtrack/packet/parser.hpp"
#include "flowtrack/packet/rewrite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowtrack;
  for (const LinkType link : kLinkTypes) {
    // An exact-size heap copy, so ASan sees any read or write past the frame.
    std::vector<std::uint8_t> frame(data, data + size);
    ParsedPacket packet, general;
    const ParseStatus status = parse_frame(frame, link, packet);
    if (status != parse_frame_general(frame, link, general)) __builtin_trap();
    if (status != ParseStatus::ok) continue;
    if (!same_meaning(packet, general)) __builtin_trap();
    rewrite_ipv4_src(frame, packet, 0x01020304);
    rewrite_ipv4_dst(frame, packet, 0x05060708);
    rewrite_src_port(frame, packet, 0x1111);
    rewrite_dst_port(frame, packet, 0x2222);
    rewrite_icmp_identifier(frame, packet, 0x3333);
    ParsedPacket again;
    if (parse_frame(frame, link, again) != ParseStatus::ok) __builtin_trap();  // a rewrite broke the frame
  }
  return 0;
}
