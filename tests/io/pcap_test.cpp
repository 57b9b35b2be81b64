#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/io/pcap_writer.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "support/link_headers.hpp"

namespace flowtrack {
namespace {

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("flowtrack_test_" + std::to_string(::getpid()) + "_" + name);
}

std::vector<std::uint8_t> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

PacketStore sample_store(LinkType link) {
  PacketStore store(link);
  for (std::uint32_t i = 0; i < 5; ++i) {
    FrameSpec spec = FrameSpec::udp4(FlowKeyV4::from_host(0x0a000001 + i, 0xc6120001, 1000, 53, ipproto::kUdp), 3 * i);
    spec.ethernet = link == LinkType::ethernet;
    const auto frame = testing::behind_link_header(link, build_frame(spec));
    // Timestamps with nanosecond digits and beyond 2^32 ns, to catch precision and width loss.
    store.append(frame, 1'700'000'000'123'456'789ull + i * 1'000'000'001ull, static_cast<std::uint32_t>(frame.size() + i));
  }
  return store;
}

class PcapRoundTrip : public ::testing::TestWithParam<std::tuple<LinkType, CaptureFormat>> {};

TEST_P(PcapRoundTrip, EveryFieldSurvives) {
  const auto [link, format] = GetParam();
  const PacketStore original = sample_store(link);
  const auto path = temp_file("roundtrip");
  original.save_pcap(path, format);
  const PacketStore loaded = PacketStore::load_pcap(path);
  std::filesystem::remove(path);
  EXPECT_EQ(loaded.link_type(), link);
  ASSERT_EQ(loaded.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(loaded[i].timestamp_ns, original[i].timestamp_ns);
    EXPECT_EQ(loaded[i].wire_length, original[i].wire_length);
    EXPECT_TRUE(std::equal(loaded[i].bytes.begin(), loaded[i].bytes.end(), original[i].bytes.begin(),
                           original[i].bytes.end()));
    ParsedPacket parsed;  // and the link header read back says where the IP packet starts
    ASSERT_EQ(parse_frame(loaded[i].bytes, loaded.link_type(), parsed), ParseStatus::ok);
    EXPECT_EQ(parsed.key4.src_addr, to_network32(0x0a000001 + static_cast<std::uint32_t>(i)));
  }
}

INSTANTIATE_TEST_SUITE_P(AllLinksAndFormats, PcapRoundTrip,
                         ::testing::Combine(::testing::ValuesIn(kLinkTypes),
                                            ::testing::Values(CaptureFormat::pcap, CaptureFormat::pcapng)));

class PcapTruncation : public ::testing::TestWithParam<CaptureFormat> {};

TEST_P(PcapTruncation, CutInsideTheLastRecordIsAnErrorThatSaysWhere) {
  const auto path = temp_file("cut");
  sample_store(LinkType::ethernet).save_pcap(path, GetParam());
  const auto bytes = read_all(path);
  std::filesystem::remove(path);
  // Find where the last record begins: the size of a file holding the first four packets.
  PacketStore four(LinkType::ethernet);
  const PacketStore all = sample_store(LinkType::ethernet);
  for (std::size_t i = 0; i < 4; ++i) four.append(all[i]);
  const auto prefix_path = temp_file("prefix");
  four.save_pcap(prefix_path, GetParam());
  const std::size_t last_record = read_all(prefix_path).size();
  std::filesystem::remove(prefix_path);

  for (std::size_t cut = last_record + 1; cut < bytes.size(); ++cut) {
    PcapReader reader = PcapReader::from_memory({bytes.data(), cut}, "cut.pcap");
    std::size_t packets = 0;
    try {
      while (reader.next()) ++packets;
      ADD_FAILURE() << "a capture cut at byte " << cut << " of " << bytes.size() << " read cleanly";
    } catch (const PcapError& e) {
      EXPECT_EQ(packets, 4u);
      EXPECT_NE(std::string(e.what()).find("packet 5"), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothFormats, PcapTruncation, ::testing::Values(CaptureFormat::pcap, CaptureFormat::pcapng));

TEST(PcapReader, GarbageAndMissingFilesAreClearErrors) {
  const std::vector<std::uint8_t> garbage(64, 0x42);
  EXPECT_THROW(PcapReader::from_memory(garbage), PcapError);
  EXPECT_THROW(PcapReader::from_memory({}), PcapError);
  EXPECT_THROW(PcapReader::open("/nonexistent/trace.pcap"), PcapError);
}

TEST(PcapReader, UnsupportedLinkTypeIsRefused) {
  auto path = temp_file("link");
  sample_store(LinkType::ethernet).save_pcap(path, CaptureFormat::pcap);
  auto bytes = read_all(path);
  std::filesystem::remove(path);
  bytes[20] = 105;  // LINKTYPE_IEEE802_11 in the global header
  try {
    PcapReader::from_memory(bytes, "wifi.pcap");
    FAIL() << "an 802.11 capture was accepted";
  } catch (const PcapError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported link type"), std::string::npos);
  }
}

TEST(PcapWriter, UnwritablePathIsAnError) {
  EXPECT_THROW(PcapWriter("/nonexistent/dir/out.pcap", LinkType::ethernet, CaptureFormat::pcap), PcapError);
  EXPECT_THROW(PcapWriter("/nonexistent/dir/out.pcapng", LinkType::ethernet, CaptureFormat::pcapng), PcapError);
}

}  // namespace
}  // namespace flowtrack
