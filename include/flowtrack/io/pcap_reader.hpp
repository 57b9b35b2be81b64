// Reads pcap and pcapng captures through libpcap, with nanosecond timestamps.
//
// Link types: Ethernet, raw IP (DLT_RAW, LINKTYPE_IPV4/IPV6) and Linux cooked captures v1/v2; any other
// is refused at open. A truncated or corrupt file raises PcapError naming the packet number and the byte
// offset where reading failed; a clean end of file is not an error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowtrack/io/packet_view.hpp"
#include "flowtrack/packet/link_type.hpp"

namespace flowtrack {

struct PcapError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class PcapReader {
 public:
  static PcapReader open(const std::string& path);
  // Reads a capture held in memory (the bytes are copied); `name` appears in error messages.
  static PcapReader from_memory(std::span<const std::uint8_t> bytes, const std::string& name = "<memory>");

  PcapReader(PcapReader&&) noexcept;
  PcapReader& operator=(PcapReader&&) noexcept;
  ~PcapReader();

  LinkType link_type() const { return link_type_; }

  // The next packet, or nullopt at the end of the capture. The view is valid until the next call.
  std::optional<PacketView> next();

  std::uint64_t packets_read() const { return packets_read_; }

 private:
  struct Handle;
  PcapReader(std::unique_ptr<Handle> handle, std::string name);

  std::unique_ptr<Handle> handle_;
  std::string name_;
  LinkType link_type_ = LinkType::ethernet;
  std::uint64_t packets_read_ = 0;
};

}  // namespace flowtrack
