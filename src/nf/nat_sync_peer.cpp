#include "flowtrack/nf/nat_sync_peer.hpp"

#include <optional>

namespace flowtrack {
namespace {

// A datagram from the peer, counted: its form and MAC (open_sync_message), one of the two types that
// peer sends, and fresh by `clock` (which then takes its epoch and counter; `new_epoch` says whether the
// epoch is a new one). Nothing, with the refusal counted by reason, when it fails any of them.
std::optional<OpenedSyncMessage> admit(std::span<const std::uint8_t> datagram, const SyncKey& key, SyncType sent, SyncType also_sent,
                                       SyncPeerClock& clock, SyncCounters& counters, bool& new_epoch) {
  ++counters.received;
  const OpenedSyncMessage m = open_sync_message(datagram, key);
  SyncRefusal refusal = m.refusal;
  if (refusal == SyncRefusal::none && m.header.type != sent && m.header.type != also_sent) refusal = SyncRefusal::malformed;
  if (refusal == SyncRefusal::none && !clock.fresh(m.header.epoch, m.header.counter, new_epoch)) refusal = SyncRefusal::replayed;
  if (refusal != SyncRefusal::none) {
    ++counters.refused[static_cast<std::size_t>(refusal)];
    return std::nullopt;
  }
  return m;
}

}  // namespace

bool SyncPeerClock::fresh(std::uint64_t epoch, std::uint64_t counter, bool& new_epoch) {
  new_epoch = false;
  if (epoch < epoch_) return false;
  if (epoch > epoch_) {
    epoch_ = epoch;
    counter_ = counter;
    new_epoch = true;
    return true;
  }
  if (counter <= counter_) return false;
  counter_ = counter;
  return true;
}

NatSyncActive::NatSyncActive(const SyncKey& key, std::uint64_t epoch, SyncTimers timers, std::size_t max_backlog)
    : key_(key), epoch_(epoch), timers_(timers), max_backlog_(max_backlog) {}

std::vector<std::uint8_t> NatSyncActive::seal(SyncType type, std::uint64_t seq, std::span<const std::uint8_t> payload) {
  ++counters_.sent;
  return seal_sync_message({type, epoch_, ++counter_, seq, 0}, payload, key_);
}

void NatSyncActive::drop_backlog() {
  queued_.clear();
  pending_.clear();
  unacked_.clear();
  resync_requested_ = true;
}

void NatSyncActive::begin_resync(std::uint8_t workers) {
  queued_.clear();
  pending_.clear();
  unacked_.clear();
  ++counters_.resyncs;
  queue(SyncResyncBegin{workers});
}

bool NatSyncActive::take_resync_request() {
  const bool requested = resync_requested_;
  resync_requested_ = false;
  return requested;
}

void NatSyncActive::receive(std::span<const std::uint8_t> datagram, Nanos now) {
  bool new_epoch = false;
  const std::optional<OpenedSyncMessage> opened = admit(datagram, key_, SyncType::ack, SyncType::hello, standby_, counters_, new_epoch);
  if (!opened) return;
  const OpenedSyncMessage& m = *opened;
  heard_ = now;
  if (m.header.type == SyncType::hello) {
    // A hello from the incarnation already being sent the whole state repeats itself while it is on the way.
    if (resynchronised_epoch_ != m.header.epoch) {
      resync_requested_ = true;
      resynchronised_epoch_ = m.header.epoch;
    }
    return;
  }
  if (m.header.seq != epoch_) return;  // acknowledges an earlier incarnation's stream
  while (!unacked_.empty() && unacked_.front().seq <= m.header.ack) {
    unacked_.pop_front();
    ++counters_.acknowledged;
  }
}

void NatSyncActive::poll(Nanos now, Datagrams& out) {
  for (Unacked& u : unacked_) {
    if (now - u.sent_at < timers_.retransmit) continue;
    out.push_back(seal(SyncType::data, u.seq, u.payload));
    u.sent_at = now;
    ++counters_.retransmitted;
    last_sent_ = now;
  }
  std::vector<std::uint8_t> record;
  while (unacked_.size() < kWindow) {
    while (!queued_.empty()) {
      record.clear();
      encode_sync_record(queued_.front(), record);
      if (pending_.size() + record.size() > kSyncMaxPayload) break;
      if (pending_.empty()) pending_since_ = now;
      pending_.insert(pending_.end(), record.begin(), record.end());
      queued_.pop_front();
    }
    const bool full = !queued_.empty();  // the next record did not fit
    if (pending_.empty() || (!full && now - pending_since_ < timers_.flush)) break;
    const std::uint64_t seq = next_seq_++;
    out.push_back(seal(SyncType::data, seq, pending_));
    unacked_.push_back({seq, std::move(pending_), now});
    pending_.clear();
    last_sent_ = now;
  }
  if (last_sent_ == kNever || now - last_sent_ >= timers_.heartbeat) {
    out.push_back(seal(SyncType::heartbeat, 0, {}));
    last_sent_ = now;
  }
}

NatSyncStandby::NatSyncStandby(const SyncKey& key, std::uint64_t epoch, SyncReplica& replica, SyncTimers timers)
    : key_(key), epoch_(epoch), replica_(replica), timers_(timers) {}

std::vector<std::uint8_t> NatSyncStandby::seal(SyncType type, std::uint64_t ack) {
  ++counters_.sent;
  return seal_sync_message({type, epoch_, ++counter_, type == SyncType::ack ? active_.epoch() : 0, ack}, {}, key_);
}

void NatSyncStandby::ask_for_everything(Nanos now, Datagrams& out) {
  if (last_hello_ != kNever && now - last_hello_ < timers_.heartbeat) return;
  out.push_back(seal(SyncType::hello, 0));
  last_hello_ = now;
}

void NatSyncStandby::poll(Nanos now, Datagrams& out) {
  if (state_ == State::waiting) ask_for_everything(now, out);
}

void NatSyncStandby::receive(std::span<const std::uint8_t> datagram, Nanos now, Datagrams& out) {
  bool new_epoch = false;
  const std::optional<OpenedSyncMessage> opened = admit(datagram, key_, SyncType::data, SyncType::heartbeat, active_, counters_, new_epoch);
  if (!opened) return;
  const OpenedSyncMessage& m = *opened;
  heard_ = now;
  if (new_epoch && state_ != State::waiting) {
    // The active restarted: what the replica holds may no longer be its state.
    state_ = State::waiting;
    expected_ = 0;
    last_hello_ = kNever;
  }
  if (m.header.type == SyncType::heartbeat) {
    if (state_ == State::waiting) ask_for_everything(now, out);
    return;
  }
  const auto records = decode_sync_records(m.payload);
  if (!records) {
    ++counters_.refused[static_cast<std::size_t>(SyncRefusal::malformed)];
    return;
  }
  if (state_ == State::waiting) {
    if (records->empty() || !std::holds_alternative<SyncResyncBegin>(records->front())) {
      ask_for_everything(now, out);  // a message of a stream this standby does not hold the start of
      return;
    }
    state_ = State::resynchronising;
    expected_ = m.header.seq;
  }
  if (m.header.seq != expected_) {
    ++counters_.duplicates;  // a repeat, or one after a gap: the active sends again from the gap
  } else {
    for (const SyncRecord& r : *records) {
      if (!replica_.apply(r, now)) ++counters_.refused[static_cast<std::size_t>(SyncRefusal::malformed)];
      if (std::holds_alternative<SyncResyncEnd>(r)) state_ = State::synchronised;
      ++counters_.records;
    }
    ++expected_;
  }
  out.push_back(seal(SyncType::ack, expected_ - 1));
}

}  // namespace flowtrack
