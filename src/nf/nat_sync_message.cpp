#include "flowtrack/nf/nat_sync_message.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>
#include <stdexcept>

#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/nf/internal/byte_codec.hpp"
#include "flowtrack/nf/internal/snapshot_codec.hpp"
#include "flowtrack/nf/lb_exceptions.hpp"
#include "flowtrack/nf/secret_file.hpp"

namespace flowtrack {
namespace {

constexpr std::uint8_t kSyncMagic[4] = {'F', 'T', 'S', 'Y'};
constexpr std::uint8_t kSyncVersion = 1;
constexpr std::size_t kMinKeyBytes = 16, kMaxKeyBytes = 1024;

// A record's kind on the wire: its place in SyncRecord, plus one.
template <class T, std::size_t I = 0>
constexpr std::uint8_t kind_of() {
  if constexpr (std::is_same_v<T, std::variant_alternative_t<I, SyncRecord>>) {
    return static_cast<std::uint8_t>(I + 1);
  } else {
    return kind_of<T, I + 1>();
  }
}

void put(ByteWriter& w, const SyncSession& s) {
  w.u8(s.worker);
  write_saved_connection(w, s.connection);
  write_mapping(w, s.mapping);
  write_mapping(w, s.hairpin);
}
void put(ByteWriter& w, const SyncRefresh& s) {
  w.u8(s.worker);
  write_saved_connection(w, s.connection);
}
void put(ByteWriter& w, const SyncClosed& s) {
  w.u8(s.worker);
  write_flow_key(w, s.original);
}
void put(ByteWriter& w, const SyncBlock& b) {
  w.u8(b.worker);
  w.u8(static_cast<std::uint8_t>(b.event));
  w.raw32(b.subscriber);
  w.raw32(b.public_addr);
  w.u16(b.first_port);
  w.u16(b.last_port);
}
void put(ByteWriter& w, const SyncQuarantinedPort& q) {
  w.u8(q.worker);
  write_quarantined_port(w, q.port);
}
void put(ByteWriter& w, const SyncQuarantinedBlock& q) {
  w.u8(q.worker);
  write_quarantined_block(w, q.block);
}
void put(ByteWriter& w, const SyncResyncBegin& b) { w.u8(b.workers); }
void put(ByteWriter&, const SyncResyncEnd&) {}
void put(ByteWriter& w, const SyncLbException& e) {
  write_flow_key(w, e.original);
  w.string(e.backend);
}
void put(ByteWriter& w, const SyncLbExceptionGone& e) { write_flow_key(w, e.original); }

SyncRecord get(ByteReader& r, std::uint8_t kind) {
  switch (kind) {
    case kind_of<SyncSession>(): {
      SyncSession s;
      s.worker = r.u8();
      s.connection = read_saved_connection(r);
      s.mapping = read_mapping(r);
      s.hairpin = read_mapping(r);
      return s;
    }
    case kind_of<SyncRefresh>(): {
      SyncRefresh s;
      s.worker = r.u8();
      s.connection = read_saved_connection(r);
      return s;
    }
    case kind_of<SyncClosed>(): {
      SyncClosed s;
      s.worker = r.u8();
      s.original = read_flow_key(r);
      return s;
    }
    case kind_of<SyncBlock>(): {
      SyncBlock b;
      b.worker = r.u8();
      const std::uint8_t event = r.u8();
      if (event > 1) r.fail();
      b.event = static_cast<PortBlockRecord::Event>(event);
      b.subscriber = r.raw32();
      b.public_addr = r.raw32();
      b.first_port = r.u16();
      b.last_port = r.u16();
      if (b.first_port == 0 || b.first_port > b.last_port) r.fail();
      return b;
    }
    case kind_of<SyncQuarantinedPort>(): {
      SyncQuarantinedPort q;
      q.worker = r.u8();
      q.port = read_quarantined_port(r);
      return q;
    }
    case kind_of<SyncQuarantinedBlock>(): {
      SyncQuarantinedBlock q;
      q.worker = r.u8();
      q.block = read_quarantined_block(r);
      return q;
    }
    case kind_of<SyncResyncBegin>(): {
      SyncResyncBegin b;
      b.workers = r.u8();
      if (b.workers == 0) r.fail();
      return b;
    }
    case kind_of<SyncResyncEnd>(): return SyncResyncEnd{};
    case kind_of<SyncLbException>(): {
      SyncLbException e;
      e.original = read_flow_key(r);
      e.backend = r.string();
      if (e.backend.empty() || e.backend.size() > kMaxSharedBackendName) r.fail();
      return e;
    }
    case kind_of<SyncLbExceptionGone>(): return SyncLbExceptionGone{read_flow_key(r)};
    default: r.fail(); return SyncResyncEnd{};
  }
}

std::array<std::uint8_t, kSyncMacBytes> mac_of(std::span<const std::uint8_t> bytes, const SyncKey& key) {
  std::array<std::uint8_t, kSyncMacBytes> mac{};
  unsigned int length = 0;
  const auto* done = HMAC(EVP_sha256(), key.bytes().data(), static_cast<int>(key.bytes().size()), bytes.data(), bytes.size(), mac.data(), &length);
  if (done == nullptr || length != kSyncMacBytes) throw std::runtime_error("sync: HMAC-SHA256 failed");
  return mac;
}

}  // namespace

std::size_t sync_record_bytes(const SyncRecord& record) {
  std::vector<std::uint8_t> bytes;
  encode_sync_record(record, bytes);
  return bytes.size();
}

void encode_sync_record(const SyncRecord& record, std::vector<std::uint8_t>& payload) {
  ByteWriter w(payload);
  std::visit(
      [&](const auto& r) {
        w.u8(kind_of<std::decay_t<decltype(r)>>());
        put(w, r);
      },
      record);
}

std::optional<std::vector<SyncRecord>> decode_sync_records(std::span<const std::uint8_t> payload) {
  ByteReader r(payload);
  std::vector<SyncRecord> records;
  while (r.ok() && r.left() != 0) records.push_back(get(r, r.u8()));
  if (!r.done()) return std::nullopt;
  return records;
}

SyncKey::SyncKey(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)) {
  if (bytes_.size() < kMinKeyBytes || bytes_.size() > kMaxKeyBytes) {
    throw std::invalid_argument(fmt::format("sync key: {} bytes; a key has {} to {}", bytes_.size(), kMinKeyBytes, kMaxKeyBytes));
  }
}

SyncKey SyncKey::from_file(const std::string& path) { return SyncKey(read_secret_file("sync key", path, kMinKeyBytes, kMaxKeyBytes)); }

std::vector<std::uint8_t> seal_sync_message(const SyncHeader& h, std::span<const std::uint8_t> payload, const SyncKey& key) {
  if (payload.size() > kSyncMaxPayload) throw std::length_error("sync: a payload larger than a datagram holds");
  std::vector<std::uint8_t> datagram;
  datagram.reserve(kSyncHeaderBytes + payload.size() + kSyncMacBytes);
  ByteWriter w(datagram);
  w.bytes(kSyncMagic, sizeof(kSyncMagic));
  w.u8(kSyncVersion);
  w.u8(static_cast<std::uint8_t>(h.type));
  w.u16(static_cast<std::uint16_t>(payload.size()));
  w.u64(h.epoch);
  w.u64(h.counter);
  w.u64(h.seq);
  w.u64(h.ack);
  w.bytes(payload.data(), payload.size());
  const auto mac = mac_of(datagram, key);
  w.bytes(mac.data(), mac.size());
  return datagram;
}

std::string_view sync_refusal_name(SyncRefusal refusal) {
  switch (refusal) {
    case SyncRefusal::none: return "none";
    case SyncRefusal::malformed: return "malformed";
    case SyncRefusal::forged: return "forged";
    case SyncRefusal::replayed: return "replayed";
    case SyncRefusal::count_: break;
  }
  return "unknown";
}

OpenedSyncMessage open_sync_message(std::span<const std::uint8_t> datagram, const SyncKey& key) {
  OpenedSyncMessage m;
  m.refusal = SyncRefusal::malformed;
  if (datagram.size() < kSyncHeaderBytes + kSyncMacBytes || datagram.size() > kSyncMaxDatagram ||
      std::memcmp(datagram.data(), kSyncMagic, sizeof(kSyncMagic)) != 0) {
    return m;
  }
  ByteReader r(datagram);
  r.bytes(sizeof(kSyncMagic));
  const std::uint8_t version = r.u8(), type = r.u8();
  const std::uint16_t length = r.u16();
  if (version != kSyncVersion || type < static_cast<std::uint8_t>(SyncType::data) || type > static_cast<std::uint8_t>(SyncType::hello) ||
      kSyncHeaderBytes + length + kSyncMacBytes != datagram.size()) {
    return m;
  }
  const auto signed_part = datagram.first(kSyncHeaderBytes + length);
  const auto expected = mac_of(signed_part, key);
  if (CRYPTO_memcmp(expected.data(), datagram.data() + signed_part.size(), kSyncMacBytes) != 0) {
    m.refusal = SyncRefusal::forged;
    return m;
  }
  m.header.type = static_cast<SyncType>(type);
  m.header.epoch = r.u64();
  m.header.counter = r.u64();
  m.header.seq = r.u64();
  m.header.ack = r.u64();
  m.payload = datagram.subspan(kSyncHeaderBytes, length);
  m.refusal = SyncRefusal::none;
  return m;
}

}  // namespace flowtrack
