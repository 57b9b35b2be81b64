// The state of a NAT's or a stateful load balancer's workers in one file: written when the process
// stops, read by the next one at its start, so that connections outlive a restart.
//
// Layout: a 48-byte header, then the body.
//
//   0  magic "FLOWTRAK"      8  u32 version      12  u32 kind (1 nat, 2 lb)
//  16  u64 configuration hash (state_config_hash.hpp: what the state's meaning depends on)
//  24  i64 wall-clock time of the save, ns since the Unix epoch
//  32  u64 body length     40  u32 CRC32C of the body     44  u32 CRC32C of bytes 0..43
//
// The body: u64 workers, then each worker's snapshot (nf/nat_snapshot.hpp, nf/lb_snapshot.hpp), its
// records little-endian, addresses and ports as on the wire. A file is refused whole, with a message
// saying why, when it is not a state file, is of another version or function, was cut short, does not
// match its checksums, was saved under another configuration, or holds a record that cannot be (a TCP
// state that does not exist, a count the bytes cannot hold, a time beyond any timeout). Whether the
// records fit the instances they go into is the restore's check (Nat44::restore, StatefulLb::restore).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowtrack/nf/lb_snapshot.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"

namespace flowtrack {

inline constexpr std::uint32_t kStateFileVersion = 1;
inline constexpr std::size_t kStateHeaderBytes = 48;

enum class StateKind : std::uint32_t { nat = 1, lb = 2 };

struct StateFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class Snapshot>
struct SavedState {
  std::int64_t saved_unix_ns = 0;
  std::vector<Snapshot> workers;
};

std::vector<std::uint8_t> encode_nat_state(std::span<const NatSnapshot> workers, std::uint64_t config_hash, std::int64_t saved_unix_ns);
std::vector<std::uint8_t> encode_lb_state(std::span<const LbSnapshot> workers, std::uint64_t config_hash, std::int64_t saved_unix_ns);

// Throw StateFileError with the reason a file is refused.
SavedState<NatSnapshot> decode_nat_state(std::span<const std::uint8_t> file, std::uint64_t config_hash);
SavedState<LbSnapshot> decode_lb_state(std::span<const std::uint8_t> file, std::uint64_t config_hash);

// Writes the file whole or not at all (a temporary file beside it, flushed to disk, renamed over it).
// Throws std::runtime_error naming the file.
void write_state_file(const std::string& path, std::span<const std::uint8_t> bytes);
// The file's bytes. Throws std::runtime_error naming the file when it cannot be read.
std::vector<std::uint8_t> read_state_file(const std::string& path);

// The times of a snapshot saved `elapsed` ago, as they are now: each remaining time less `elapsed`
// (at least 0: such a connection expires at the first expiry pass).
void age_snapshot(NatSnapshot& snapshot, Nanos elapsed);
void age_snapshot(LbSnapshot& snapshot, Nanos elapsed);

}  // namespace flowtrack
