#include "flowtrack/io/pcap_reader.hpp"

#include <pcap/pcap.h>

#include <cstdio>
#include <fmt/format.h>

namespace flowtrack {
namespace {

// LINKTYPE_IPV4 / LINKTYPE_IPV6 as libpcap reports them (DLT numbers equal the LINKTYPE numbers there).
constexpr int kDltIpv4 = 228;
constexpr int kDltIpv6 = 229;
constexpr int kDltLinuxSll2 = 276;
constexpr int kDltLoop = 108;        // LINKTYPE_LOOP (OpenBSD's own DLT_LOOP is 12; libpcap maps it to 108)
constexpr int kDltPppSerial = 50;    // PPP in HDLC-like framing (RFC 1662)
constexpr int kDltCiscoHdlc = 104;

std::optional<LinkType> link_type_of(int dlt) {
  switch (dlt) {
    case DLT_EN10MB: return LinkType::ethernet;
    case DLT_RAW:
    case kDltIpv4:
    case kDltIpv6: return LinkType::raw_ip;
    case DLT_LINUX_SLL: return LinkType::linux_sll;
    case kDltLinuxSll2: return LinkType::linux_sll2;
    case DLT_NULL: return LinkType::bsd_null;
    case kDltLoop: return LinkType::bsd_loop;
    case DLT_PPP:
    case kDltPppSerial: return LinkType::ppp;
    case kDltCiscoHdlc: return LinkType::cisco_hdlc;
    default: return std::nullopt;
  }
}

}  // namespace

struct PcapReader::Handle {
  pcap_t* pcap = nullptr;
  std::vector<std::uint8_t> memory;  // backing store for from_memory (fmemopen reads from it)
  ~Handle() {
    if (pcap != nullptr) pcap_close(pcap);  // also closes the FILE* it was opened on
  }
};

PcapReader::PcapReader(std::unique_ptr<Handle> handle, std::string name)
    : handle_(std::move(handle)), name_(std::move(name)) {
  const int dlt = pcap_datalink(handle_->pcap);
  const auto link = link_type_of(dlt);
  if (!link) {
    throw PcapError(fmt::format("{}: unsupported link type {} ({})", name_, dlt,
                                pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "unknown"));
  }
  link_type_ = *link;
}

PcapReader::PcapReader(PcapReader&&) noexcept = default;
PcapReader& PcapReader::operator=(PcapReader&&) noexcept = default;
PcapReader::~PcapReader() = default;

PcapReader PcapReader::open(const std::string& path) {
  char error[PCAP_ERRBUF_SIZE] = {};
  auto handle = std::make_unique<Handle>();
  handle->pcap = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, error);
  if (handle->pcap == nullptr) throw PcapError(fmt::format("{}: {}", path, error));
  return PcapReader(std::move(handle), path);
}

PcapReader PcapReader::from_memory(std::span<const std::uint8_t> bytes, const std::string& name) {
  auto handle = std::make_unique<Handle>();
  handle->memory.assign(bytes.begin(), bytes.end());
  if (handle->memory.empty()) throw PcapError(fmt::format("{}: empty capture", name));
  FILE* file = fmemopen(handle->memory.data(), handle->memory.size(), "rb");
  if (file == nullptr) throw PcapError(fmt::format("{}: cannot open memory stream", name));
  char error[PCAP_ERRBUF_SIZE] = {};
  handle->pcap = pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, error);
  if (handle->pcap == nullptr) {
    std::fclose(file);
    throw PcapError(fmt::format("{}: {}", name, error));
  }
  return PcapReader(std::move(handle), name);
}

std::optional<PacketView> PcapReader::next() {
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  const int result = pcap_next_ex(handle_->pcap, &header, &data);
  if (result == 1) {
    ++packets_read_;
    // With nanosecond precision libpcap stores nanoseconds in tv_usec.
    const std::uint64_t ts = static_cast<std::uint64_t>(header->ts.tv_sec) * 1'000'000'000ull +
                             static_cast<std::uint64_t>(header->ts.tv_usec);
    return PacketView{{data, header->caplen}, header->len, ts};
  }
  if (result == PCAP_ERROR_BREAK) return std::nullopt;
  FILE* file = pcap_file(handle_->pcap);
  const long offset = file != nullptr ? std::ftell(file) : -1;
  throw PcapError(fmt::format("{}: corrupt or truncated capture at packet {} (byte offset {}): {}", name_,
                              packets_read_ + 1, offset, pcap_geterr(handle_->pcap)));
}

}  // namespace flowtrack
