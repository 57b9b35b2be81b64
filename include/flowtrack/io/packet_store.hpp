// An in-memory trace: every packet's bytes in one contiguous arena, plus a dense array of records.
//
// There is no per-packet heap object, so a store of millions of packets loads once and replays at
// memory speed; workers read views into the arena and copy a packet only when they rewrite it.
// All packets of one store share one link type.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flowtrack/io/packet_view.hpp"
#include "flowtrack/io/pcap_writer.hpp"
#include "flowtrack/packet/link_type.hpp"

namespace flowtrack {

class PacketStore {
 public:
  struct Record {
    std::uint64_t offset;  // into the arena
    std::uint32_t captured_length;
    std::uint32_t wire_length;
    std::uint64_t timestamp_ns;
  };

  explicit PacketStore(LinkType link = LinkType::ethernet) : link_type_(link) {}

  static PacketStore load_pcap(const std::string& path);  // throws PcapError
  void save_pcap(const std::string& path, CaptureFormat format = CaptureFormat::pcap) const;

  void reserve(std::size_t packets, std::size_t bytes);
  // Forgets every packet but keeps the memory (and its pages, once touched) for the next appends.
  void clear() {
    arena_.clear();
    records_.clear();
  }
  void append(std::span<const std::uint8_t> bytes, std::uint64_t timestamp_ns, std::uint32_t wire_length);
  void append(const PacketView& packet) { append(packet.bytes, packet.timestamp_ns, packet.wire_length); }

  PacketView operator[](std::size_t index) const {
    const Record& r = records_[index];
    return {{arena_.data() + r.offset, r.captured_length}, r.wire_length, r.timestamp_ns};
  }
  // The bytes of one packet, writable: for tools that rewrite a stored trace in place.
  std::span<std::uint8_t> mutable_bytes(std::size_t index) {
    const Record& r = records_[index];
    return {arena_.data() + r.offset, r.captured_length};
  }

  std::size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  LinkType link_type() const { return link_type_; }
  const std::vector<Record>& records() const { return records_; }
  std::size_t arena_bytes() const { return arena_.size(); }
  std::uint64_t wire_bytes() const;
  // Time from the first to the last packet (0 for fewer than two packets).
  std::uint64_t duration_ns() const;

 private:
  LinkType link_type_;
  std::vector<std::uint8_t> arena_;
  std::vector<Record> records_;
};

}  // namespace flowtrack
