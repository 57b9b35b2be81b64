// Writes captures: classic pcap with nanosecond timestamps (through libpcap), or pcapng (written here,
// since libpcap cannot write it) with one interface whose timestamp resolution is 1 ns.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>

#include "flowtrack/packet/link_type.hpp"

namespace flowtrack {

enum class CaptureFormat : std::uint8_t { pcap, pcapng };

// The LINKTYPE_ value stored in capture files for a link type.
std::uint16_t linktype_number(LinkType link);

class PcapWriter {
 public:
  // Throws PcapError (pcap_reader.hpp) when the file cannot be created.
  PcapWriter(const std::string& path, LinkType link, CaptureFormat format, std::uint32_t snaplen = 262144);
  PcapWriter(PcapWriter&&) noexcept;
  PcapWriter& operator=(PcapWriter&&) noexcept;
  ~PcapWriter();

  void write(std::span<const std::uint8_t> bytes, std::uint64_t timestamp_ns, std::uint32_t wire_length);
  // Flushes and closes; throws PcapError if the data could not be written. The destructor closes too,
  // silently.
  void close();

 private:
  struct Sink;
  std::unique_ptr<Sink> sink_;
  std::string path_;
};

}  // namespace flowtrack
