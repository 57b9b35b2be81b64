// The sync link's datagrams (nat_sync_message.hpp): every record reads back as written; a datagram is
// opened only with its key and whole, and one that is cut, lengthened, bit-flipped or sealed with
// another key is refused as malformed or forged; records that cannot be are refused whole; nothing
// larger than a datagram is sealed; a key file others may read is refused.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "flowtrack/nf/lb_exceptions.hpp"
#include "flowtrack/nf/nat_sync_message.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

SyncKey sync_test_key(std::uint8_t fill = 7) { return SyncKey(std::vector<std::uint8_t>(32, fill)); }

SavedConnection<FlowKeyV4> synced_connection() {
  const FlowKeyV4 original = FlowKeyV4::from_host(0x0a000001, 0x08080808, 40000, 443, ipproto::kTcp);
  FlowKeyV4 reply = original.reversed();
  reply.dst_addr = to_network32(0xcb007101);
  return {original, reply, ipproto::kTcp, true, {TcpState::established, Direction::original}, 90 * kNanosPerSecond};
}

std::vector<SyncRecord> one_of_each_record() {
  const NatSnapshot::Mapping mapping{to_network32(0x0a000001), to_network32(0xcb007101), to_network16(40000), to_network16(41000),
                                     ipproto::kTcp};
  return {SyncResyncBegin{2},
          SyncSession{1, synced_connection(), mapping, {}},
          SyncRefresh{0, synced_connection()},
          SyncClosed{1, synced_connection().original},
          SyncBlock{0, PortBlockRecord::Event::released, to_network32(0x0a000001), to_network32(0xcb007101), 4096, 4159},
          SyncQuarantinedPort{1, {to_network32(0xcb007101), 1500, ipproto::kUdp, 3 * kNanosPerSecond}},
          SyncQuarantinedBlock{0, {to_network32(0xcb007101), 2048, 7 * kNanosPerSecond}},
          SyncResyncEnd{},
          SyncLbException{synced_connection().original, "b2"},
          SyncLbExceptionGone{synced_connection().original}};
}

std::vector<std::uint8_t> payload_of(const std::vector<SyncRecord>& records) {
  std::vector<std::uint8_t> payload;
  for (const SyncRecord& r : records) encode_sync_record(r, payload);
  return payload;
}

TEST(SyncMessage, EveryRecordReadsBackAsWritten) {
  const std::vector<SyncRecord> records = one_of_each_record();
  const std::vector<std::uint8_t> payload = payload_of(records);
  std::size_t bytes = 0;
  for (const SyncRecord& r : records) bytes += sync_record_bytes(r);
  EXPECT_EQ(payload.size(), bytes);
  const auto decoded = decode_sync_records(payload);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, records);
}

TEST(SyncMessage, ADatagramOpensWithItsKeyAndCarriesItsHeaderAndPayload) {
  const SyncKey key = sync_test_key();
  const std::vector<std::uint8_t> payload = payload_of(one_of_each_record());
  const SyncHeader header{SyncType::data, 1'795'000'000'000'000'000, 12, 5, 0};
  const std::vector<std::uint8_t> datagram = seal_sync_message(header, payload, key);
  EXPECT_EQ(datagram.size(), kSyncHeaderBytes + payload.size() + kSyncMacBytes);
  const OpenedSyncMessage m = open_sync_message(datagram, key);
  ASSERT_EQ(m.refusal, SyncRefusal::none);
  EXPECT_EQ(m.header.type, SyncType::data);
  EXPECT_EQ(m.header.epoch, header.epoch);
  EXPECT_EQ(m.header.counter, 12u);
  EXPECT_EQ(m.header.seq, 5u);
  EXPECT_TRUE(std::ranges::equal(m.payload, payload));
}

TEST(SyncMessage, AnotherKeyOrAnyChangedByteIsRefused) {
  const SyncKey key = sync_test_key();
  const std::vector<std::uint8_t> datagram = seal_sync_message({SyncType::data, 9, 1, 1, 0}, payload_of(one_of_each_record()), key);
  EXPECT_EQ(open_sync_message(datagram, sync_test_key(8)).refusal, SyncRefusal::forged);
  for (std::size_t i = 0; i < datagram.size(); ++i) {
    std::vector<std::uint8_t> changed = datagram;
    changed[i] ^= 0x01;
    const SyncRefusal refusal = open_sync_message(changed, key).refusal;
    EXPECT_TRUE(refusal == SyncRefusal::forged || refusal == SyncRefusal::malformed) << "byte " << i;
  }
}

TEST(SyncMessage, ACutOrLengthenedDatagramIsMalformed) {
  const SyncKey key = sync_test_key();
  const std::vector<std::uint8_t> datagram = seal_sync_message({SyncType::heartbeat, 9, 1, 0, 0}, {}, key);
  for (std::size_t size = 0; size < datagram.size(); ++size) {
    EXPECT_EQ(open_sync_message(std::span(datagram).first(size), key).refusal, SyncRefusal::malformed) << size << " bytes";
  }
  std::vector<std::uint8_t> longer = datagram;
  longer.push_back(0);
  EXPECT_EQ(open_sync_message(longer, key).refusal, SyncRefusal::malformed);
  const std::vector<std::uint8_t> huge(kSyncMaxDatagram + 1, 0);
  EXPECT_EQ(open_sync_message(huge, key).refusal, SyncRefusal::malformed);
}

TEST(SyncMessage, NothingLargerThanADatagramIsSealed) {
  const SyncKey key = sync_test_key();
  const std::vector<std::uint8_t> most(kSyncMaxPayload, 0);
  EXPECT_EQ(seal_sync_message({SyncType::data, 1, 1, 1, 0}, most, key).size(), kSyncMaxDatagram);
  const std::vector<std::uint8_t> too_much(kSyncMaxPayload + 1, 0);
  EXPECT_THROW(seal_sync_message({SyncType::data, 1, 1, 1, 0}, too_much, key), std::length_error);
}

TEST(SyncMessage, RecordsThatCannotBeAreRefusedWhole) {
  const std::vector<std::uint8_t> good = payload_of(one_of_each_record());
  std::vector<std::uint8_t> unknown_kind = good;
  unknown_kind.push_back(200);
  EXPECT_FALSE(decode_sync_records(unknown_kind).has_value());
  EXPECT_FALSE(decode_sync_records(std::span(good).first(good.size() - 2)).has_value()) << "a record cut short";
  std::vector<std::uint8_t> no_workers;
  encode_sync_record(SyncResyncBegin{1}, no_workers);
  no_workers[1] = 0;
  EXPECT_FALSE(decode_sync_records(no_workers).has_value());
  std::vector<std::uint8_t> bad_state;
  encode_sync_record(SyncRefresh{0, synced_connection()}, bad_state);
  bad_state[1 + 1 + 2 * 13 + 2] = 200;  // kind, worker, two keys, protocol and flags: the TCP state
  EXPECT_FALSE(decode_sync_records(bad_state).has_value());
  std::vector<std::uint8_t> reversed_block;
  encode_sync_record(SyncBlock{0, PortBlockRecord::Event::allocated, 1, 2, 5000, 4000}, reversed_block);
  EXPECT_FALSE(decode_sync_records(reversed_block).has_value());
  for (const std::size_t length : {std::size_t{0}, kMaxSharedBackendName + 1}) {
    std::vector<std::uint8_t> bad_name;
    encode_sync_record(SyncLbException{synced_connection().original, std::string(length, 'b')}, bad_name);
    EXPECT_FALSE(decode_sync_records(bad_name).has_value()) << "a backend name of " << length << " bytes";
  }
  EXPECT_TRUE(decode_sync_records({}).has_value()) << "an empty payload is no records";
}

TEST(SyncKey, AKeyOfAnotherLengthOrAFileOthersMayReadIsRefused) {
  EXPECT_THROW(SyncKey(std::vector<std::uint8_t>(15, 1)), std::invalid_argument);
  EXPECT_THROW(SyncKey(std::vector<std::uint8_t>(1025, 1)), std::invalid_argument);
  const std::string path = test::temp_config("sync.key", "0123456789abcdef0123456789abcdef");
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(SyncKey::from_file(path).bytes().size(), 32u);
  ::chmod(path.c_str(), 0640);
  try {
    SyncKey::from_file(path);
    ADD_FAILURE() << "a key others may read was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SyncKey::from_file(path + ".missing"), std::runtime_error);
  // A FIFO with no writer is refused at once, not waited on; a file past the longest key, not cut.
  const std::string fifo = path + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto refusal = [](const std::string& file) {
    try {
      SyncKey::from_file(file);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(fifo).find("not a regular file"), std::string::npos);
  const std::string long_key = test::temp_config("long-sync.key", std::string(1025, 'k'));
  ::chmod(long_key.c_str(), 0600);
  EXPECT_NE(refusal(long_key).find("over 1024 bytes"), std::string::npos) << refusal(long_key);
}

}  // namespace
}  // namespace flowtrack
