#include "flowtrack/io/pcap_writer.hpp"

#include <pcap/pcap.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <vector>

#include "flowtrack/io/pcap_reader.hpp"

namespace flowtrack {

std::uint16_t linktype_number(LinkType link) {
  switch (link) {
    case LinkType::ethernet: return 1;
    case LinkType::raw_ip: return 101;
    case LinkType::linux_sll: return 113;
    case LinkType::linux_sll2: return 276;
    case LinkType::bsd_null: return 0;
    case LinkType::bsd_loop: return 108;
    case LinkType::ppp: return 9;
    case LinkType::cisco_hdlc: return 104;
  }
  return 1;
}

namespace {

int dlt_of(LinkType link) {
  switch (link) {
    case LinkType::ethernet: return DLT_EN10MB;
    case LinkType::raw_ip: return DLT_RAW;
    case LinkType::linux_sll: return DLT_LINUX_SLL;
    case LinkType::linux_sll2: return 276;
    case LinkType::bsd_null: return DLT_NULL;
    case LinkType::bsd_loop: return 108;
    case LinkType::ppp: return DLT_PPP;
    case LinkType::cisco_hdlc: return 104;
  }
  return DLT_EN10MB;
}

// pcapng blocks are little-endian here (the section header's byte-order magic tells readers so) and
// padded to 32 bits.
class PcapngBlock {
 public:
  void u16(std::uint16_t v) { append(&v, 2); }
  void u32(std::uint32_t v) { append(&v, 4); }
  void bytes(std::span<const std::uint8_t> data) {
    append(data.data(), data.size());
    while (body_.size() % 4 != 0) body_.push_back(0);
  }
  // Writes type, total length, body, total length.
  bool write(std::FILE* file, std::uint32_t type) const {
    const auto total = static_cast<std::uint32_t>(body_.size() + 12);
    return std::fwrite(&type, 4, 1, file) == 1 && std::fwrite(&total, 4, 1, file) == 1 &&
           (body_.empty() || std::fwrite(body_.data(), body_.size(), 1, file) == 1) &&
           std::fwrite(&total, 4, 1, file) == 1;
  }

 private:
  void append(const void* data, std::size_t size) {
    const std::size_t at = body_.size();
    body_.resize(at + size);
    std::memcpy(body_.data() + at, data, size);
  }
  std::vector<std::uint8_t> body_;
};

constexpr std::uint32_t kSectionHeaderBlock = 0x0A0D0D0A;
constexpr std::uint32_t kInterfaceDescriptionBlock = 1;
constexpr std::uint32_t kEnhancedPacketBlock = 6;
constexpr std::uint16_t kOptionTimestampResolution = 9;

}  // namespace

struct PcapWriter::Sink {
  pcap_t* dead = nullptr;
  pcap_dumper_t* dumper = nullptr;  // classic pcap
  std::FILE* file = nullptr;        // pcapng
  std::uint32_t snaplen = 0;
  bool failed = false;  // a pcapng block could not be written
  int error = 0;        // errno of the first failure seen, 0 if none or unknown

  ~Sink() { finish(); }

  // Flushes and closes; false if any write failed. A stream's error flag stays set once one of its
  // writes failed, so checking it here checks every write before (pcap_dump itself reports nothing).
  bool finish() {
    bool ok = !failed;
    if (dumper != nullptr) {
      std::FILE* stream = pcap_dump_file(dumper);
      ok = pcap_dump_flush(dumper) == 0 && std::ferror(stream) == 0 && ok;
      note_error(ok);
      // pcap_dump_close drops fclose's result: a duplicate of the descriptor, closed after it, reports
      // what the file system still failed to store (close(2) flushes, on NFS for one).
      const int copy = ::dup(::fileno(stream));
      pcap_dump_close(dumper);
      dumper = nullptr;
      ok = copy >= 0 && ::close(copy) == 0 && ok;
      note_error(ok);
    }
    if (dead != nullptr) {
      pcap_close(dead);
      dead = nullptr;
    }
    if (file != nullptr) {
      ok = std::fflush(file) == 0 && std::ferror(file) == 0 && ok;
      note_error(ok);
      ok = std::fclose(file) == 0 && ok;
      note_error(ok);
      file = nullptr;
    }
    return ok;
  }

  void note_error(bool ok) {
    if (!ok && error == 0) error = errno;
  }
};

PcapWriter::PcapWriter(const std::string& path, LinkType link, CaptureFormat format, std::uint32_t snaplen)
    : sink_(std::make_unique<Sink>()), path_(path) {
  sink_->snaplen = snaplen;
  if (format == CaptureFormat::pcap) {
    sink_->dead = pcap_open_dead_with_tstamp_precision(dlt_of(link), static_cast<int>(snaplen),
                                                       PCAP_TSTAMP_PRECISION_NANO);
    if (sink_->dead == nullptr) throw PcapError(fmt::format("{}: cannot create a pcap handle", path));
    sink_->dumper = pcap_dump_open(sink_->dead, path.c_str());
    if (sink_->dumper == nullptr) throw PcapError(fmt::format("{}: {}", path, pcap_geterr(sink_->dead)));
    return;
  }
  sink_->file = std::fopen(path.c_str(), "wb");
  if (sink_->file == nullptr) throw PcapError(fmt::format("{}: {}", path, std::strerror(errno)));
  PcapngBlock section;
  section.u32(0x1A2B3C4D);  // byte-order magic
  section.u16(1);           // version 1.0
  section.u16(0);
  section.u32(0xffffffff);  // section length unknown (64 bits of -1)
  section.u32(0xffffffff);
  PcapngBlock interface;
  interface.u16(linktype_number(link));
  interface.u16(0);
  interface.u32(snaplen);
  interface.u16(kOptionTimestampResolution);
  interface.u16(1);
  const std::uint8_t nanoseconds = 9;  // 10^-9 s
  interface.bytes({&nanoseconds, 1});
  interface.u32(0);  // end of options
  if (!section.write(sink_->file, kSectionHeaderBlock) || !interface.write(sink_->file, kInterfaceDescriptionBlock)) {
    throw PcapError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  }
}

PcapWriter::PcapWriter(PcapWriter&&) noexcept = default;
PcapWriter& PcapWriter::operator=(PcapWriter&&) noexcept = default;
PcapWriter::~PcapWriter() = default;

void PcapWriter::write(std::span<const std::uint8_t> bytes, std::uint64_t timestamp_ns, std::uint32_t wire_length) {
  const auto caplen = static_cast<std::uint32_t>(std::min<std::size_t>(bytes.size(), sink_->snaplen));
  wire_length = std::max(wire_length, caplen);
  if (sink_->dumper != nullptr) {
    pcap_pkthdr header{};
    header.ts.tv_sec = static_cast<time_t>(timestamp_ns / 1'000'000'000ull);
    header.ts.tv_usec = static_cast<suseconds_t>(timestamp_ns % 1'000'000'000ull);  // nanoseconds here
    header.caplen = caplen;
    header.len = wire_length;
    pcap_dump(reinterpret_cast<u_char*>(sink_->dumper), &header, bytes.data());
    return;
  }
  PcapngBlock packet;
  packet.u32(0);  // interface 0
  packet.u32(static_cast<std::uint32_t>(timestamp_ns >> 32));
  packet.u32(static_cast<std::uint32_t>(timestamp_ns));
  packet.u32(caplen);
  packet.u32(wire_length);
  packet.bytes(bytes.first(caplen));
  if (!packet.write(sink_->file, kEnhancedPacketBlock)) {
    sink_->failed = true;
    sink_->note_error(false);
  }
}

void PcapWriter::close() {
  if (!sink_ || sink_->finish()) return;
  throw PcapError(sink_->error != 0 ? fmt::format("{}: write failed: {}", path_, std::strerror(sink_->error))
                                    : fmt::format("{}: write failed", path_));
}

}  // namespace flowtrack
