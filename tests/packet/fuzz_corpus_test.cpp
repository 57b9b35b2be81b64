// Writes the parser fuzzer's seed corpus when FLOWTRACK_WRITE_CORPUS names a directory (run by hand
// after changing the frame builder); otherwise checks that every committed seed still parses as it did.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {
namespace {

std::vector<std::vector<std::uint8_t>> seed_frames() {
  std::vector<std::vector<std::uint8_t>> frames;
  const auto tcp = FlowKeyV4::from_host(0x0a000001, 0xc6120001, 40000, 80, ipproto::kTcp);
  const auto udp = FlowKeyV4::from_host(0x0a000001, 0xc6120035, 5353, 53, ipproto::kUdp);
  frames.push_back(build_frame(FrameSpec::tcp4(tcp, tcpflag::kSyn)));
  frames.push_back(build_frame(FrameSpec::tcp4(tcp, tcpflag::kAck | tcpflag::kPsh, 32)));
  frames.push_back(build_frame(FrameSpec::udp4(udp, 16)));
  FrameSpec vlan = FrameSpec::udp4(udp, 4);
  vlan.vlan_count = 2;
  vlan.vlan_ids = {10, 20};
  frames.push_back(build_frame(vlan));
  FrameSpec echo;
  echo.key4 = FlowKeyV4::from_host(0x0a000001, 0x08080808, 9, 9, ipproto::kIcmp);
  frames.push_back(build_frame(echo));
  FrameSpec error;
  error.key4 = FlowKeyV4::from_host(0xc6120001, 0x0a000001, 0, 0, ipproto::kIcmp);
  error.icmp_type = 3;
  const auto quoted = frames[2];
  error.icmp_quoted = std::span<const std::uint8_t>(quoted).subspan(14, 28);
  frames.push_back(build_frame(error));
  FrameSpec v6;
  v6.ip_version = 6;
  v6.key6.src_addr[15] = 1;
  v6.key6.dst_addr[15] = 2;
  v6.key6.protocol = ipproto::kTcp;
  v6.key6.src_port = to_network16(1234);
  v6.key6.dst_port = to_network16(443);
  frames.push_back(build_frame(v6));
  FrameSpec raw = FrameSpec::tcp4(tcp, tcpflag::kFin | tcpflag::kAck);
  raw.ethernet = false;
  frames.push_back(build_frame(raw));
  return frames;
}

TEST(FuzzCorpus, SeedsParse) {
  const auto frames = seed_frames();
  if (const char* out = std::getenv("FLOWTRACK_WRITE_CORPUS")) {
    std::filesystem::create_directories(out);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      std::ofstream file(std::filesystem::path(out) / ("seed" + std::to_string(i)), std::ios::binary);
      file.write(reinterpret_cast<const char*>(frames[i].data()), static_cast<std::streamsize>(frames[i].size()));
    }
  }
  for (const auto& frame : frames) {
    ParsedPacket packet;
    const LinkType link = (frame[0] >> 4) == 4 ? LinkType::raw_ip : LinkType::ethernet;
    EXPECT_EQ(parse_frame(frame, link, packet), ParseStatus::ok);
  }
}

}  // namespace
}  // namespace flowtrack
