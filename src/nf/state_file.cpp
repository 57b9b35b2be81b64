#include "flowtrack/nf/state_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/internal/byte_codec.hpp"
#include "flowtrack/nf/internal/snapshot_codec.hpp"

namespace flowtrack {
namespace {

constexpr char kMagic[8] = {'F', 'L', 'O', 'W', 'T', 'R', 'A', 'K'};

// The smallest size of each record on disk: what a count is checked against.
constexpr std::size_t kSessionBytes = kSavedConnectionBytes + 8, kBlockBytes = 10;
constexpr std::size_t kServiceBytes = 2 + 4 + 2 + 1 + 8, kBackendBytes = 2 + 4 + 2 + 4 + 1 + 8 + 8;
constexpr std::size_t kLbConnectionBytes = kSavedConnectionBytes + 8;
// A backend's flags byte.
constexpr std::uint8_t kRemoved = 1, kDown = 2;

std::string_view kind_name(std::uint32_t kind) {
  return kind == static_cast<std::uint32_t>(StateKind::nat) ? "nat" : kind == static_cast<std::uint32_t>(StateKind::lb) ? "lb" : "unknown";
}

void write_body(ByteWriter& w, const NatSnapshot& s) {
  w.u64(s.mappings.size());
  for (const NatSnapshot::Mapping& m : s.mappings) write_mapping(w, m);
  w.u64(s.sessions.size());
  for (const NatSnapshot::Session& session : s.sessions) {
    write_saved_connection(w, session.connection);
    w.u32(session.mapping);
    w.u32(session.hairpin_mapping);
  }
  w.u64(s.blocks.size());
  for (const NatSnapshot::Block& b : s.blocks) {
    w.raw32(b.subscriber);
    w.raw32(b.public_addr);
    w.u16(b.first_port);
  }
  w.u64(s.quarantined_ports.size());
  for (const NatSnapshot::QuarantinedPort& q : s.quarantined_ports) write_quarantined_port(w, q);
  w.u64(s.quarantined_blocks.size());
  for (const NatSnapshot::QuarantinedBlock& q : s.quarantined_blocks) write_quarantined_block(w, q);
}

void read_body(ByteReader& r, NatSnapshot& s) {
  s.mappings.resize(r.count(kMappingBytes));
  for (NatSnapshot::Mapping& m : s.mappings) m = read_mapping(r);
  s.sessions.resize(r.count(kSessionBytes));
  for (NatSnapshot::Session& session : s.sessions) {
    session.connection = read_saved_connection(r);
    session.mapping = r.u32();
    session.hairpin_mapping = r.u32();
  }
  s.blocks.resize(r.count(kBlockBytes));
  for (NatSnapshot::Block& b : s.blocks) {
    b.subscriber = r.raw32();
    b.public_addr = r.raw32();
    b.first_port = r.u16();
  }
  s.quarantined_ports.resize(r.count(kQuarantinedPortBytes));
  for (NatSnapshot::QuarantinedPort& q : s.quarantined_ports) q = read_quarantined_port(r);
  s.quarantined_blocks.resize(r.count(kQuarantinedBlockBytes));
  for (NatSnapshot::QuarantinedBlock& q : s.quarantined_blocks) q = read_quarantined_block(r);
}

void write_body(ByteWriter& w, const LbSnapshot& s) {
  w.u64(s.services.size());
  for (const LbSnapshot::Service& service : s.services) {
    w.string(service.name);
    w.raw32(service.vip);
    w.raw16(service.port);
    w.u8(service.protocol);
    w.u64(service.backends.size());
    for (const LbSnapshot::Backend& b : service.backends) {
      w.string(b.name);
      w.raw32(b.address);
      w.raw16(b.port);
      w.u32(b.weight);
      w.u8((b.removed ? kRemoved : 0) | (b.down ? kDown : 0));
      w.u64(b.total_connections);
      w.i64(b.smooth_weight);
    }
  }
  w.u64(s.connections.size());
  for (const LbSnapshot::Connection& c : s.connections) {
    write_saved_connection(w, c.connection);
    w.u32(c.service);
    w.u32(c.backend);
  }
}

void read_body(ByteReader& r, LbSnapshot& s) {
  s.services.resize(r.count(kServiceBytes));
  for (LbSnapshot::Service& service : s.services) {
    service.name = r.string();
    service.vip = r.raw32();
    service.port = r.raw16();
    service.protocol = r.u8();
    service.backends.resize(r.count(kBackendBytes));
    for (LbSnapshot::Backend& b : service.backends) {
      b.name = r.string();
      b.address = r.raw32();
      b.port = r.raw16();
      b.weight = r.u32();
      const std::uint8_t flags = r.u8();
      if ((flags & ~(kRemoved | kDown)) != 0) r.fail();
      b.removed = (flags & kRemoved) != 0;
      b.down = (flags & kDown) != 0;
      b.total_connections = r.u64();
      b.smooth_weight = r.i64();
    }
  }
  s.connections.resize(r.count(kLbConnectionBytes));
  for (LbSnapshot::Connection& c : s.connections) {
    c.connection = read_saved_connection(r);
    c.service = r.u32();
    c.backend = r.u32();
  }
}

template <class Snapshot>
std::vector<std::uint8_t> encode(StateKind kind, std::span<const Snapshot> workers, std::uint64_t config_hash, std::int64_t saved_unix_ns) {
  std::vector<std::uint8_t> file(kStateHeaderBytes);
  ByteWriter body(file);
  body.u64(workers.size());
  for (const Snapshot& s : workers) write_body(body, s);
  std::vector<std::uint8_t> header;
  ByteWriter h(header);
  h.bytes(kMagic, sizeof(kMagic));
  h.u32(kStateFileVersion);
  h.u32(static_cast<std::uint32_t>(kind));
  h.u64(config_hash);
  h.i64(saved_unix_ns);
  h.u64(file.size() - kStateHeaderBytes);
  h.u32(crc32c(std::span(file).subspan(kStateHeaderBytes)));
  h.u32(crc32c(header));
  std::memcpy(file.data(), header.data(), kStateHeaderBytes);
  return file;
}

template <class Snapshot>
SavedState<Snapshot> decode(StateKind kind, std::span<const std::uint8_t> file, std::uint64_t config_hash) {
  if (file.size() < kStateHeaderBytes || std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) {
    throw StateFileError("not a flowtrack state file");
  }
  ByteReader h(file.first(kStateHeaderBytes));
  h.bytes(sizeof(kMagic));
  const std::uint32_t version = h.u32(), file_kind = h.u32();
  const std::uint64_t file_hash = h.u64();
  const std::int64_t saved_unix_ns = h.i64();
  const std::uint64_t body_length = h.u64();
  const std::uint32_t body_crc = h.u32(), header_crc = h.u32();
  // The version first: another version may lay its header out otherwise.
  if (version != kStateFileVersion) {
    throw StateFileError(fmt::format("written by version {} of the state format; this flowtrack reads version {}", version, kStateFileVersion));
  }
  if (crc32c(file.first(kStateHeaderBytes - 4)) != header_crc) throw StateFileError("corrupt: its header's checksum does not match");
  if (file_kind != static_cast<std::uint32_t>(kind)) {
    throw StateFileError(fmt::format("the state of {}, not of {}", kind_name(file_kind), kind_name(static_cast<std::uint32_t>(kind))));
  }
  const std::span<const std::uint8_t> body = file.subspan(kStateHeaderBytes);
  if (body.size() != body_length) {
    throw StateFileError(fmt::format("{}: {} bytes of body where its header says {}", body.size() < body_length ? "truncated" : "too long",
                                     body.size(), body_length));
  }
  if (crc32c(body) != body_crc) throw StateFileError("corrupt: its body's checksum does not match");
  if (file_hash != config_hash) {
    throw StateFileError(fmt::format("saved under another configuration (hash {:016x}; this one's is {:016x}): its state would not mean "
                                     "the same here",
                                     file_hash, config_hash));
  }
  ByteReader r(body);
  SavedState<Snapshot> state{saved_unix_ns, {}};
  state.workers.resize(r.count(8));
  for (Snapshot& s : state.workers) read_body(r, s);
  if (!r.done()) throw StateFileError("corrupt: a record that cannot be, or bytes past the last one");
  return state;
}

Nanos aged(Nanos remaining, Nanos elapsed) { return remaining > elapsed ? remaining - elapsed : 0; }

}  // namespace

std::vector<std::uint8_t> encode_nat_state(std::span<const NatSnapshot> workers, std::uint64_t config_hash, std::int64_t saved_unix_ns) {
  return encode(StateKind::nat, workers, config_hash, saved_unix_ns);
}

std::vector<std::uint8_t> encode_lb_state(std::span<const LbSnapshot> workers, std::uint64_t config_hash, std::int64_t saved_unix_ns) {
  return encode(StateKind::lb, workers, config_hash, saved_unix_ns);
}

SavedState<NatSnapshot> decode_nat_state(std::span<const std::uint8_t> file, std::uint64_t config_hash) {
  return decode<NatSnapshot>(StateKind::nat, file, config_hash);
}

SavedState<LbSnapshot> decode_lb_state(std::span<const std::uint8_t> file, std::uint64_t config_hash) {
  return decode<LbSnapshot>(StateKind::lb, file, config_hash);
}

void age_snapshot(NatSnapshot& snapshot, Nanos elapsed) {
  for (NatSnapshot::Session& s : snapshot.sessions) s.connection.remaining = aged(s.connection.remaining, elapsed);
  for (NatSnapshot::QuarantinedPort& q : snapshot.quarantined_ports) q.remaining = aged(q.remaining, elapsed);
  for (NatSnapshot::QuarantinedBlock& q : snapshot.quarantined_blocks) q.remaining = aged(q.remaining, elapsed);
}

void age_snapshot(LbSnapshot& snapshot, Nanos elapsed) {
  for (LbSnapshot::Connection& c : snapshot.connections) c.connection.remaining = aged(c.connection.remaining, elapsed);
}

void write_state_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  const std::string temporary = path + ".tmp";
  const auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw std::runtime_error(fmt::format("state file {}: {}: {}", path, what, reason));
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot create " + temporary);
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail("cannot write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot flush");
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("cannot rename " + temporary);
}

std::vector<std::uint8_t> read_state_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(fmt::format("state file {}: {}", path, std::strerror(errno)));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    throw std::runtime_error(fmt::format("state file {}: read error", path));
  }
  return bytes;
}

}  // namespace flowtrack
