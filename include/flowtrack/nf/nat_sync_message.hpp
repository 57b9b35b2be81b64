// The messages of a NAT pair's sync link: UDP datagrams between the active and the standby, each
// authenticated with a shared key (HMAC-SHA256, OpenSSL's) and bounded to one Ethernet frame.
//
// A datagram:
//
//   0  magic "FTSY"   4  u8 version (1)   5  u8 type   6  u16 payload length
//   8  u64 epoch      the sender's incarnation: its start time, ns since the Unix epoch
//  16  u64 counter    1, 2, ... for every datagram the sender sends in this epoch (retransmissions too)
//  24  u64 seq        data: its place in the active's stream (1, 2, ...); ack: the epoch of the active
//                     whose stream it acknowledges (an ack to an earlier incarnation acknowledges nothing)
//  32  u64 ack        ack: the last data message the standby holds, in order
//  40  payload        data: records (below)
//  40 + length        HMAC-SHA256 of everything before it, 32 bytes
//
// Types: data (active -> standby: records), heartbeat (active -> standby, when nothing else went out
// for a heartbeat interval), ack (standby -> active), hello (standby -> active: "send me everything",
// when it starts or lost the stream). Every integer is little-endian, addresses and ports as on the wire.
//
// A datagram is refused, counted by reason and never applied, when it is malformed (too short or long,
// another magic, version or type, a length that is not the datagram's), forged (its MAC is not the
// key's), or, once authenticated, replayed (nat_sync_peer.hpp: an epoch older than the peer's, or a
// counter not above the last one); a data message whose records do not decode is malformed too.
//
// Records (first byte: the kind; then the worker whose state it is, except for the resync markers):
//   session            a session opened: its connection and mapping, its hairpin peer's mapping
//   refresh            a session's protocol state and the time it has left
//   closed             a session ended (its mapping with its last session)
//   block              a port block given to or taken back from a subscriber
//   quarantined_port   a port waiting out its quarantine (in a resynchronisation)
//   quarantined_block  a block waiting out its quarantine (in a resynchronisation)
//   resync_begin       what follows is the whole state: forget everything held (u8: the worker count)
//   resync_end         the whole state has come
//   lb_exception       (between balancer instances, nf/lb_peer_link.hpp) a connection off today's
//                      choice: its tuple and its backend's name (1 to 64 bytes; no worker byte)
//   lb_exception_gone  a connection that is no exception any more: its tuple
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "flowtrack/nf/nat_snapshot.hpp"
#include "flowtrack/nf/port_block_log.hpp"

namespace flowtrack {

inline constexpr std::size_t kSyncMaxDatagram = 1472;  // one Ethernet frame of IPv4 and UDP
inline constexpr std::size_t kSyncHeaderBytes = 40;
inline constexpr std::size_t kSyncMacBytes = 32;
inline constexpr std::size_t kSyncMaxPayload = kSyncMaxDatagram - kSyncHeaderBytes - kSyncMacBytes;

enum class SyncType : std::uint8_t { data = 1, ack = 2, heartbeat = 3, hello = 4 };

struct SyncHeader {
  SyncType type = SyncType::data;
  std::uint64_t epoch = 0, counter = 0, seq = 0, ack = 0;
};

struct SyncSession {
  std::uint8_t worker = 0;
  SavedConnection<FlowKeyV4> connection;
  NatSnapshot::Mapping mapping, hairpin;  // hairpin: protocol 0 when none
  bool operator==(const SyncSession&) const = default;
};
struct SyncRefresh {
  std::uint8_t worker = 0;
  SavedConnection<FlowKeyV4> connection;
  bool operator==(const SyncRefresh&) const = default;
};
struct SyncClosed {
  std::uint8_t worker = 0;
  FlowKeyV4 original;
  bool operator==(const SyncClosed&) const = default;
};
struct SyncBlock {
  std::uint8_t worker = 0;
  PortBlockRecord::Event event = PortBlockRecord::Event::allocated;
  std::uint32_t subscriber = 0, public_addr = 0;
  std::uint16_t first_port = 0, last_port = 0;  // host order
  bool operator==(const SyncBlock&) const = default;
};
struct SyncQuarantinedPort {
  std::uint8_t worker = 0;
  NatSnapshot::QuarantinedPort port;
  bool operator==(const SyncQuarantinedPort&) const = default;
};
struct SyncQuarantinedBlock {
  std::uint8_t worker = 0;
  NatSnapshot::QuarantinedBlock block;
  bool operator==(const SyncQuarantinedBlock&) const = default;
};
struct SyncResyncBegin {
  std::uint8_t workers = 1;
  bool operator==(const SyncResyncBegin&) const = default;
};
struct SyncResyncEnd {
  bool operator==(const SyncResyncEnd&) const = default;
};

struct SyncLbException {
  FlowKeyV4 original;
  std::string backend;
  bool operator==(const SyncLbException&) const = default;
};
struct SyncLbExceptionGone {
  FlowKeyV4 original;
  bool operator==(const SyncLbExceptionGone&) const = default;
};

using SyncRecord = std::variant<SyncSession, SyncRefresh, SyncClosed, SyncBlock, SyncQuarantinedPort, SyncQuarantinedBlock,
                                SyncResyncBegin, SyncResyncEnd, SyncLbException, SyncLbExceptionGone>;

// What a receiving end applies the records of a stream to, in order: a NAT standby's copy of its
// active's state (nat_replica.hpp), a balancer's exceptions told by one peer (lb_peer_link.hpp).
// false: a record that cannot be the receiver's (counted as malformed, nothing changed).
class SyncReplica {
 public:
  virtual ~SyncReplica() = default;
  virtual bool apply(const SyncRecord& record, Nanos now) = 0;
};

// The bytes a record takes in a payload.
std::size_t sync_record_bytes(const SyncRecord& record);
// Appends the record to `payload`.
void encode_sync_record(const SyncRecord& record, std::vector<std::uint8_t>& payload);
// The records of a data message's payload, or nothing when any of them does not decode (an unknown
// kind, a field out of its range, bytes left over or missing).
std::optional<std::vector<SyncRecord>> decode_sync_records(std::span<const std::uint8_t> payload);

// The shared key: at least 16 bytes, at most 1024.
class SyncKey {
 public:
  // Throws std::invalid_argument for a key of another length.
  explicit SyncKey(std::vector<std::uint8_t> bytes);
  // The key file's whole content. Throws std::runtime_error naming the file when it cannot be read or
  // holds a key of another length, or when others than its owner may read it.
  static SyncKey from_file(const std::string& path);
  std::span<const std::uint8_t> bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

// A datagram: header, payload (at most kSyncMaxPayload bytes) and MAC.
std::vector<std::uint8_t> seal_sync_message(const SyncHeader& header, std::span<const std::uint8_t> payload, const SyncKey& key);

enum class SyncRefusal : std::uint8_t { none, malformed, forged, replayed, count_ };
inline constexpr std::size_t kSyncRefusalCount = static_cast<std::size_t>(SyncRefusal::count_);
std::string_view sync_refusal_name(SyncRefusal refusal);

struct OpenedSyncMessage {
  SyncRefusal refusal = SyncRefusal::none;  // none: the header and payload below are the sender's
  SyncHeader header;
  std::span<const std::uint8_t> payload;    // into the datagram
};
// Checks a datagram's form and MAC (not whether it is a replay: the peer's state says that).
OpenedSyncMessage open_sync_message(std::span<const std::uint8_t> datagram, const SyncKey& key);

}  // namespace flowtrack
