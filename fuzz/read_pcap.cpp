// libFuzzer target: arbitrary bytes as a pcap or pcapng capture, read to the end and every packet
// parsed. Errors must surface as PcapError, never as a crash or an out-of-bounds access.
#include <cstdint>

#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/packet/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowtrack;
  try {
    PcapReader reader = PcapReader::from_memory({data, size}, "fuzz");
    ParsedPacket packet;
    while (auto view = reader.next()) {
      (void)parse_frame(view->bytes, reader.link_type(), packet);
    }
  } catch (const PcapError&) {
    // Rejected input, reported as it should be.
  }
  return 0;
}
