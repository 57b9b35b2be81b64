// The records of a saved state as bytes, shared by the state file (state_file.hpp) and the sync link's
// messages (nat_sync_message.hpp): a flow key, a saved connection, a NAT mapping, a quarantined port or
// block. A reader fails (byte_codec.hpp) on a value that cannot be: a TCP state that does not exist, a
// flag that does not, a time beyond any timeout.
#pragma once

#include <concepts>
#include <type_traits>

#include "flowtrack/conntrack/saved_connection.hpp"
#include "flowtrack/nf/internal/byte_codec.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"

namespace flowtrack {

// Each record's layout is one field list, record_fields(io, record), that drives both directions: the
// writer's io puts each field, the reader's fills it in place, and a third counts its bytes (checked
// against the constants below at compile time). A field is u8, u16 (little-endian), raw16 or raw32
// (network order, the bytes as they lie in memory) or remaining (a time left, at most kMaxTimeout).

class FieldWriter {
 public:
  explicit FieldWriter(ByteWriter& w) : w_(w) {}
  void u8(std::uint8_t v) { w_.u8(v); }
  void u16(std::uint16_t v) { w_.u16(v); }
  void raw16(std::uint16_t v) { w_.raw16(v); }
  void raw32(std::uint32_t v) { w_.raw32(v); }
  void remaining(Nanos v) { w_.u64(v); }

 private:
  ByteWriter& w_;
};

class FieldReader {
 public:
  explicit FieldReader(ByteReader& r) : r_(r) {}
  void u8(std::uint8_t& v) { v = r_.u8(); }
  void u16(std::uint16_t& v) { v = r_.u16(); }
  void raw16(std::uint16_t& v) { v = r_.raw16(); }
  void raw32(std::uint32_t& v) { v = r_.raw32(); }
  void remaining(Nanos& v) {
    v = r_.u64();
    if (v > kMaxTimeout) r_.fail();
  }

 private:
  ByteReader& r_;
};

struct FieldBytes {
  std::size_t bytes = 0;
  constexpr void u8(std::uint8_t) { bytes += 1; }
  constexpr void u16(std::uint16_t) { bytes += 2; }
  constexpr void raw16(std::uint16_t) { bytes += 2; }
  constexpr void raw32(std::uint32_t) { bytes += 4; }
  constexpr void remaining(Nanos) { bytes += 8; }
};

// `Record`, const (written or counted) or not (read into).
template <class R, class Record>
concept RecordOf = std::same_as<std::remove_const_t<R>, Record>;

template <class Io>
constexpr void record_fields(Io& io, RecordOf<FlowKeyV4> auto& k) {
  io.raw32(k.src_addr);
  io.raw32(k.dst_addr);
  io.raw16(k.src_port);
  io.raw16(k.dst_port);
  io.u8(k.protocol);
}

template <class Io>
constexpr void record_fields(Io& io, RecordOf<NatSnapshot::Mapping> auto& m) {
  io.raw32(m.inside_addr);
  io.raw16(m.inside_port);
  io.raw32(m.external_addr);
  io.raw16(m.external_port);
  io.u8(m.protocol);
}

template <class Io>
constexpr void record_fields(Io& io, RecordOf<NatSnapshot::QuarantinedPort> auto& q) {
  io.raw32(q.public_addr);
  io.u16(q.port);
  io.u8(q.protocol);
  io.remaining(q.remaining);
}

template <class Io>
constexpr void record_fields(Io& io, RecordOf<NatSnapshot::QuarantinedBlock> auto& q) {
  io.raw32(q.public_addr);
  io.u16(q.first_port);
  io.remaining(q.remaining);
}

template <class Record>
void write_record(ByteWriter& w, const Record& record) {
  FieldWriter io(w);
  record_fields(io, record);
}

template <class Record>
Record read_record(ByteReader& r) {
  Record record;
  FieldReader io(r);
  record_fields(io, record);
  return record;
}

template <class Record>
constexpr std::size_t record_bytes() {
  FieldBytes io;
  const Record record{};
  record_fields(io, record);
  return io.bytes;
}

// Bytes on the wire of each, the least a count of them is checked against.
inline constexpr std::size_t kFlowKeyBytes = 13;
inline constexpr std::size_t kSavedConnectionBytes = 2 * kFlowKeyBytes + 4 + 8;
inline constexpr std::size_t kMappingBytes = 13;
inline constexpr std::size_t kQuarantinedPortBytes = 15, kQuarantinedBlockBytes = 14;
static_assert(record_bytes<FlowKeyV4>() == kFlowKeyBytes);
static_assert(record_bytes<NatSnapshot::Mapping>() == kMappingBytes);
static_assert(record_bytes<NatSnapshot::QuarantinedPort>() == kQuarantinedPortBytes);
static_assert(record_bytes<NatSnapshot::QuarantinedBlock>() == kQuarantinedBlockBytes);

inline void write_flow_key(ByteWriter& w, const FlowKeyV4& k) { write_record(w, k); }
inline FlowKeyV4 read_flow_key(ByteReader& r) { return read_record<FlowKeyV4>(r); }
inline void write_mapping(ByteWriter& w, const NatSnapshot::Mapping& m) { write_record(w, m); }
inline NatSnapshot::Mapping read_mapping(ByteReader& r) { return read_record<NatSnapshot::Mapping>(r); }
inline void write_quarantined_port(ByteWriter& w, const NatSnapshot::QuarantinedPort& q) { write_record(w, q); }
inline NatSnapshot::QuarantinedPort read_quarantined_port(ByteReader& r) { return read_record<NatSnapshot::QuarantinedPort>(r); }
inline void write_quarantined_block(ByteWriter& w, const NatSnapshot::QuarantinedBlock& q) { write_record(w, q); }
inline NatSnapshot::QuarantinedBlock read_quarantined_block(ByteReader& r) { return read_record<NatSnapshot::QuarantinedBlock>(r); }

// A saved connection's flags byte.
inline constexpr std::uint8_t kReplied = 1, kOneWay = 2;

// Its two flow keys by their field list; the flags, TCP state and closer packed and checked here.
inline void write_saved_connection(ByteWriter& w, const SavedConnection<FlowKeyV4>& c) {
  write_flow_key(w, c.original);
  write_flow_key(w, c.reply);
  w.u8(c.protocol);
  w.u8((c.replied ? kReplied : 0) | (c.one_way ? kOneWay : 0));
  w.u8(static_cast<std::uint8_t>(c.tcp.state));
  w.u8(static_cast<std::uint8_t>(c.tcp.closer));
  FieldWriter(w).remaining(c.remaining);
}

inline SavedConnection<FlowKeyV4> read_saved_connection(ByteReader& r) {
  SavedConnection<FlowKeyV4> c;
  c.original = read_flow_key(r);
  c.reply = read_flow_key(r);
  c.protocol = r.u8();
  const std::uint8_t flags = r.u8(), state = r.u8(), closer = r.u8();
  FieldReader(r).remaining(c.remaining);
  if ((flags & ~(kReplied | kOneWay)) != 0 || state >= kTcpStateCount || closer > 1) r.fail();
  c.replied = (flags & kReplied) != 0;
  c.one_way = (flags & kOneWay) != 0;
  c.tcp = {static_cast<TcpState>(state), static_cast<Direction>(closer)};
  return c;
}

}  // namespace flowtrack
