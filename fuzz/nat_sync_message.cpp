// libFuzzer target: arbitrary bytes as a datagram on a NAT pair's sync link (nf/nat_sync_message.hpp),
// which comes from the network. The first byte steers: bit 0 clear, the rest is the datagram as
// received, so the checks of its form and MAC are fuzzed; bit 0 set, the rest is the payload of a data
// message sealed with the pair's key (the resync_begin that opens a stream put first when bit 1 is
// set), so the records' decoder and the standby's replica are reached past the MAC. Must never crash:
// a datagram is opened or refused by reason, records decode or are refused whole, and whatever a
// standby takes, its copy must still give a snapshot that a fresh NAT restores record by record. The
// same datagram reaches a balancer's peer link (nf/lb_peer_link.hpp), whose exceptions stay in bound.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/nf/lb_peer_link.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/nat_replica.hpp"
#include "flowtrack/nf/nat_sync_message.hpp"
#include "flowtrack/nf/nat_sync_peer.hpp"
#include "flowtrack/table/cuckoo.hpp"

namespace {

using namespace flowtrack;

const SyncKey& pair_key() {
  static const SyncKey key(std::vector<std::uint8_t>(32, 0x42));
  return key;
}

NatConfig small_nat() {
  NatConfig c;
  c.inside_network = to_network32(0x0a000000);
  c.inside_prefix_length = 8;
  c.pool = {to_network32(0xcb007101)};
  c.port_first = 1024;
  c.port_last = 2047;
  c.max_sessions = c.max_mappings = 256;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  std::vector<std::uint8_t> datagram;
  if ((data[0] & 1) == 0) {
    datagram.assign(rest.begin(), rest.end());
  } else {
    std::vector<std::uint8_t> payload;
    if ((data[0] & 2) != 0) encode_sync_record(SyncResyncBegin{1}, payload);
    payload.insert(payload.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(std::min(rest.size(), kSyncMaxPayload - payload.size())));
    datagram = seal_sync_message({SyncType::data, 7, 1, 1, 0}, payload, pair_key());
  }
  const OpenedSyncMessage opened = open_sync_message(datagram, pair_key());
  if (opened.refusal == SyncRefusal::none && opened.payload.size() > kSyncMaxPayload) __builtin_trap();
  if (const auto records = decode_sync_records(rest)) {
    std::vector<std::uint8_t> again;
    for (const SyncRecord& r : *records) encode_sync_record(r, again);
    if (!std::ranges::equal(again, rest)) __builtin_trap();  // a record decodes from one encoding only
  }
  NatReplica replica(1, kNanosPerSecond);
  NatSyncStandby standby(pair_key(), 1, replica);
  Datagrams answers;
  standby.receive(datagram, kNanosPerSecond, answers);
  for (const auto& answer : answers) {
    if (answer.size() > kSyncMaxDatagram) __builtin_trap();
  }
  constexpr std::size_t kExceptionBound = 16;
  LbPeerExceptions told(kExceptionBound);
  LbPeerLink peers(pair_key(), 1, 1, told);
  answers.clear();
  peers.receive(0, datagram, kNanosPerSecond, answers);
  if (told.size() > kExceptionBound) __builtin_trap();
  for (const auto& answer : answers) {
    if (answer.size() > kSyncMaxDatagram) __builtin_trap();
  }
  if (replica.sessions() == 0 && replica.blocks() == 0) return 0;  // quarantines alone: the state_file fuzzer's
  Nat44<CuckooTable<FlowKeyV4>> nat(small_nat(), 0, 1);
  nat.restore(replica.snapshot(0, 2 * kNanosPerSecond), 2 * kNanosPerSecond, RestoreMode::what_fits);
  return 0;
}
