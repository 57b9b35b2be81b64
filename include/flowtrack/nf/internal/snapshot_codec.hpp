// The records of a saved state as bytes, shared by the state file (state_file.hpp) and the sync link's
// messages (nat_sync_message.hpp): a flow key, a saved connection, a NAT mapping, a quarantined port or
// block. A reader fails
// (byte_codec.hpp) on a value that cannot be: a TCP state that does not exist, a flag that does not, a time
// beyond any timeout.
#pragma once

#include "flowtrack/conntrack/saved_connection.hpp"
#include "flowtrack/nf/internal/byte_codec.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"

namespace flowtrack {

// Bytes on the wire of each, the least a count of them is checked against.
inline constexpr std::size_t kFlowKeyBytes = 13;
inline constexpr std::size_t kSavedConnectionBytes = 2 * kFlowKeyBytes + 4 + 8;
inline constexpr std::size_t kMappingBytes = 13;
inline constexpr std::size_t kQuarantinedPortBytes = 15, kQuarantinedBlockBytes = 14;

inline void write_flow_key(ByteWriter& w, const FlowKeyV4& k) {
  w.raw32(k.src_addr);
  w.raw32(k.dst_addr);
  w.raw16(k.src_port);
  w.raw16(k.dst_port);
  w.u8(k.protocol);
}

inline FlowKeyV4 read_flow_key(ByteReader& r) {
  FlowKeyV4 k;
  k.src_addr = r.raw32();
  k.dst_addr = r.raw32();
  k.src_port = r.raw16();
  k.dst_port = r.raw16();
  k.protocol = r.u8();
  return k;
}

inline Nanos read_remaining(ByteReader& r) {
  const Nanos remaining = r.u64();
  if (remaining > kMaxTimeout) r.fail();
  return remaining;
}

// A saved connection's flags byte.
inline constexpr std::uint8_t kReplied = 1, kOneWay = 2;

inline void write_saved_connection(ByteWriter& w, const SavedConnection<FlowKeyV4>& c) {
  write_flow_key(w, c.original);
  write_flow_key(w, c.reply);
  w.u8(c.protocol);
  w.u8((c.replied ? kReplied : 0) | (c.one_way ? kOneWay : 0));
  w.u8(static_cast<std::uint8_t>(c.tcp.state));
  w.u8(static_cast<std::uint8_t>(c.tcp.closer));
  w.u64(c.remaining);
}

inline SavedConnection<FlowKeyV4> read_saved_connection(ByteReader& r) {
  SavedConnection<FlowKeyV4> c;
  c.original = read_flow_key(r);
  c.reply = read_flow_key(r);
  c.protocol = r.u8();
  const std::uint8_t flags = r.u8(), state = r.u8(), closer = r.u8();
  c.remaining = read_remaining(r);
  if ((flags & ~(kReplied | kOneWay)) != 0 || state >= kTcpStateCount || closer > 1) r.fail();
  c.replied = (flags & kReplied) != 0;
  c.one_way = (flags & kOneWay) != 0;
  c.tcp = {static_cast<TcpState>(state), static_cast<Direction>(closer)};
  return c;
}

inline void write_mapping(ByteWriter& w, const NatSnapshot::Mapping& m) {
  w.raw32(m.inside_addr);
  w.raw16(m.inside_port);
  w.raw32(m.external_addr);
  w.raw16(m.external_port);
  w.u8(m.protocol);
}

inline NatSnapshot::Mapping read_mapping(ByteReader& r) {
  NatSnapshot::Mapping m;
  m.inside_addr = r.raw32();
  m.inside_port = r.raw16();
  m.external_addr = r.raw32();
  m.external_port = r.raw16();
  m.protocol = r.u8();
  return m;
}

inline void write_quarantined_port(ByteWriter& w, const NatSnapshot::QuarantinedPort& q) {
  w.raw32(q.public_addr);
  w.u16(q.port);
  w.u8(q.protocol);
  w.u64(q.remaining);
}

inline NatSnapshot::QuarantinedPort read_quarantined_port(ByteReader& r) {
  NatSnapshot::QuarantinedPort q;
  q.public_addr = r.raw32();
  q.port = r.u16();
  q.protocol = r.u8();
  q.remaining = read_remaining(r);
  return q;
}

inline void write_quarantined_block(ByteWriter& w, const NatSnapshot::QuarantinedBlock& q) {
  w.raw32(q.public_addr);
  w.u16(q.first_port);
  w.u64(q.remaining);
}

inline NatSnapshot::QuarantinedBlock read_quarantined_block(ByteReader& r) {
  NatSnapshot::QuarantinedBlock q;
  q.public_addr = r.raw32();
  q.first_port = r.u16();
  q.remaining = read_remaining(r);
  return q;
}

}  // namespace flowtrack
