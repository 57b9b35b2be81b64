#include "flowtrack/nf/lb_peer_link.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <variant>

namespace flowtrack {
namespace {

// The type of a datagram, for its routing only: the end that takes it authenticates it, and counts
// anything that is not a datagram of its peer's.
SyncType claimed_type(std::span<const std::uint8_t> datagram) {
  constexpr std::size_t kTypeAt = 5;  // after the magic and the version (nat_sync_message.hpp)
  return datagram.size() > kTypeAt ? static_cast<SyncType>(datagram[kTypeAt]) : SyncType::data;
}

}  // namespace

SyncRecord sync_record_of(const LbExceptionEvent& event) {
  if (event.kind == LbExceptionEvent::Kind::ceased) return SyncLbExceptionGone{event.original};
  return SyncLbException{event.original, std::string(event.backend())};
}

bool LbPeerReplica::apply(const SyncRecord& record, Nanos /*now*/) {
  if (const auto* e = std::get_if<SyncLbException>(&record)) return exceptions_.install(peer_, e->original, e->backend);
  if (const auto* gone = std::get_if<SyncLbExceptionGone>(&record)) {
    exceptions_.remove(peer_, gone->original);
    return true;
  }
  if (std::holds_alternative<SyncResyncBegin>(record)) {
    exceptions_.forget(peer_);  // its whole set follows
    return true;
  }
  return std::holds_alternative<SyncResyncEnd>(record);
}

LbPeerLink::LbPeerLink(const SyncKey& key, std::uint64_t epoch, std::size_t peers, LbPeerExceptions& installed, SyncTimers timers,
                       std::size_t max_backlog)
    : timers_(timers) {
  if (peers == 0 || peers > kMaxLbPeers) throw std::invalid_argument(fmt::format("lb peers: 1 to {} peers", kMaxLbPeers));
  for (std::size_t p = 0; p < peers; ++p) {
    peers_.push_back(std::make_unique<Peer>(key, epoch, installed, static_cast<std::uint8_t>(p), timers, max_backlog));
  }
}

void LbPeerLink::queue(const LbExceptionEvent& event) {
  const SyncRecord record = sync_record_of(event);
  for (const auto& p : peers_) {
    if (p->streamed_to) p->sender.queue(record);
  }
}

std::vector<std::size_t> LbPeerLink::take_resync_requests(Nanos now) {
  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    Peer& p = *peers_[i];
    if (!p.sender.take_resync_request()) continue;
    p.streamed_to = p.sender.standby_heard_within(now, timers_.dead_after);
    if (p.streamed_to) due.push_back(i);
  }
  return due;
}

std::vector<std::size_t> LbPeerLink::streamed_to() const {
  std::vector<std::size_t> streamed;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (peers_[i]->streamed_to) streamed.push_back(i);
  }
  return streamed;
}

void LbPeerLink::resynchronise(std::size_t peer, std::span<const LbExceptionEvent> exceptions) {
  NatSyncActive& sender = peers_[peer]->sender;
  sender.begin_resync(1);
  for (const LbExceptionEvent& e : exceptions) sender.queue(sync_record_of(e));
  sender.queue(SyncResyncEnd{});
}

void LbPeerLink::receive(std::size_t peer, std::span<const std::uint8_t> datagram, Nanos now, Datagrams& out) {
  Peer& p = *peers_[peer];
  const SyncType type = claimed_type(datagram);
  if (type == SyncType::ack || type == SyncType::hello) {
    p.sender.receive(datagram, now);  // about this instance's stream to the peer
  } else {
    p.receiver.receive(datagram, now, out);  // the peer's stream, or something it refuses
  }
}

void LbPeerLink::poll(std::size_t peer, Nanos now, Datagrams& out) {
  Peer& p = *peers_[peer];
  p.sender.poll(now, out);
  p.receiver.poll(now, out);
}

SyncCounters LbPeerLink::counters() const {
  SyncCounters sum;
  const auto add = [&](const SyncCounters& c) {
    sum.sent += c.sent;
    sum.retransmitted += c.retransmitted;
    sum.received += c.received;
    sum.records += c.records;
    sum.duplicates += c.duplicates;
    sum.resyncs += c.resyncs;
    sum.acknowledged += c.acknowledged;
    for (std::size_t r = 0; r < kSyncRefusalCount; ++r) sum.refused[r] += c.refused[r];
  };
  for (const auto& p : peers_) {
    add(p->sender.counters());
    add(p->receiver.counters());
  }
  return sum;
}

}  // namespace flowtrack
