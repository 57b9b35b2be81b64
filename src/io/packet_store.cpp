#include "flowtrack/io/packet_store.hpp"

#include "flowtrack/io/pcap_reader.hpp"

namespace flowtrack {

PacketStore PacketStore::load_pcap(const std::string& path) {
  PcapReader reader = PcapReader::open(path);
  PacketStore store(reader.link_type());
  while (auto packet = reader.next()) store.append(*packet);
  return store;
}

void PacketStore::save_pcap(const std::string& path, CaptureFormat format) const {
  PcapWriter writer(path, link_type_, format);
  for (std::size_t i = 0; i < size(); ++i) {
    const PacketView packet = (*this)[i];
    writer.write(packet.bytes, packet.timestamp_ns, packet.wire_length);
  }
  writer.close();
}

void PacketStore::reserve(std::size_t packets, std::size_t bytes) {
  records_.reserve(packets);
  arena_.reserve(bytes);
}

void PacketStore::append(std::span<const std::uint8_t> bytes, std::uint64_t timestamp_ns, std::uint32_t wire_length) {
  records_.push_back({arena_.size(), static_cast<std::uint32_t>(bytes.size()),
                      std::max<std::uint32_t>(wire_length, static_cast<std::uint32_t>(bytes.size())), timestamp_ns});
  arena_.insert(arena_.end(), bytes.begin(), bytes.end());
}

std::uint64_t PacketStore::wire_bytes() const {
  std::uint64_t total = 0;
  for (const Record& r : records_) total += r.wire_length;
  return total;
}

std::uint64_t PacketStore::duration_ns() const {
  if (records_.size() < 2) return 0;
  return records_.back().timestamp_ns - records_.front().timestamp_ns;
}

}  // namespace flowtrack
