// libFuzzer target: arbitrary bytes as a state file (nf/state_file.hpp), and whatever a file decodes to
// restored into a fresh NAT (ports one by one, or in blocks) and a fresh stateful load balancer, as a
// restarting process does. The first byte steers: bit 0 clear, the rest is the whole file (its header's
// hash taken as the expected one, so that only the checksums stand in the way); bit 0 set, the rest is
// a body that gets a valid header (kind from bit 1), so the body's decoder and the restores are reached
// past the checksums. Must never crash: a file is decoded or refused with a StateFileError, a snapshot
// restored or refused with std::invalid_argument, and a restored instance must then age out everything
// and give every port back.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/state_file.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace {

using namespace flowtrack;

constexpr Nanos kFarFuture = Nanos{1} << 50;

NatConfig nat_config(std::uint16_t block_size) {
  NatConfig c;
  c.inside_network = to_network32(0x0a000000);
  c.inside_prefix_length = 8;
  c.pool = {to_network32(0xcb007101), to_network32(0xcb007102)};
  c.port_first = 1024;
  c.port_last = 2047;
  c.block_size = block_size;
  c.max_sessions = c.max_mappings = 256;
  c.filtering = block_size == 0 ? NatFiltering::endpoint_independent : NatFiltering::address_dependent;
  return c;
}

StatefulLbConfig lb_config() {
  StatefulLbConfig c;
  c.services = {{"web", to_network32(0xc6120001), to_network16(443), ipproto::kTcp,
                 {{"b1", to_network32(0x0a010001), to_network16(80), 1}, {"b2", to_network32(0x0a010002), 0, 2}}}};
  c.max_connections = 256;
  c.maglev_size = 251;
  return c;
}

// A header around `body` that every check up to the body's decoding accepts.
std::vector<std::uint8_t> sealed(StateKind kind, std::span<const std::uint8_t> body) {
  std::vector<std::uint8_t> file = kind == StateKind::nat ? encode_nat_state({}, 0, 0) : encode_lb_state({}, 0, 0);
  file.resize(kStateHeaderBytes);
  file.insert(file.end(), body.begin(), body.end());
  const auto put32 = [&](std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i) file[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  for (std::size_t i = 0; i < 8; ++i) file[32 + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(body.size()) >> (8 * i));
  put32(40, crc32c(body));
  put32(44, crc32c(std::span(file).first(kStateHeaderBytes - 4)));
  return file;
}

std::uint64_t header_hash(std::span<const std::uint8_t> file) {
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < 8 && 16 + i < file.size(); ++i) h |= std::uint64_t{file[16 + i]} << (8 * i);
  return h;
}

// Whether the snapshot was restored (and everything then aged out); a refused one leaves the instance
// unusable, as its contract says.
template <class Nf, class Snapshot>
bool restore_and_age(Nf& nf, const Snapshot& snapshot) {
  try {
    nf.restore(snapshot, kNanosPerSecond);
  } catch (const std::invalid_argument&) {
    return false;
  }
  while (nf.expire(kFarFuture, 1 << 20) != 0) {
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  const bool body_only = (data[0] & 1) != 0;
  const StateKind kind = (data[0] & 2) != 0 ? StateKind::lb : StateKind::nat;
  const std::vector<std::uint8_t> file = body_only ? sealed(kind, rest) : std::vector<std::uint8_t>(rest.begin(), rest.end());
  if (!body_only || kind == StateKind::nat) {
    try {
      for (const NatSnapshot& snapshot : decode_nat_state(file, body_only ? 0 : header_hash(file)).workers) {
        for (const std::uint16_t block_size : {0, 64}) {
          Nat44<CuckooTable<FlowKeyV4>> nat(nat_config(block_size), 0, 1);
          // Everything ends and goes back.
          if (restore_and_age(nat, snapshot) && (nat.mapping_count() != 0 || nat.blocks_held() != 0)) __builtin_trap();
        }
      }
    } catch (const StateFileError&) {
    }
  }
  if (!body_only || kind == StateKind::lb) {
    try {
      for (const LbSnapshot& snapshot : decode_lb_state(file, body_only ? 0 : header_hash(file)).workers) {
        StatefulLb<CuckooTable<FlowKeyV4>> lb(lb_config());
        if (!restore_and_age(lb, snapshot)) continue;
        for (const Backend& b : lb.services()[0].backends()) {
          if (b.connections != 0) __builtin_trap();
        }
      }
    } catch (const StateFileError&) {
    }
  }
  return 0;
}
