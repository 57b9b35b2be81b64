#include "flowtrack/nf/internal/concury_learning.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

ConcuryLearning::ConcuryLearning(compact::ConcuryControl control, Lifetimes lifetimes)
    : control_(std::move(control)), lifetimes_(lifetimes), known_(std::size_t{1} << kKnownBits, KnownSlot{kEmpty, kNoActivity}) {}

std::uint64_t ConcuryLearning::tag(std::uint32_t service, std::uint64_t key) {
  FLOWTRACK_ASSERT(key >> 48 == 0 && service < kMaxServices, "a client endpoint of one of fewer than 0x7fff services");
  return std::uint64_t{service} << 48 | key;
}

void ConcuryLearning::learn_all(std::span<const Report> reports) {
  // In chunks, so that ConcuryControl::learn_all overlaps each chunk's misses with no scratch to keep:
  // the chunk's cache slots prefetched and read, the reports that miss them learnt, then every report
  // taking effect in order (so ends are queued in report order, which is time order, however the
  // reports were batched). A report that hit its slot is known for sure (nothing is forgotten here);
  // when its slot still says known and answered and it is neither a SYN, nor a close, nor a flow's
  // first datagram, its only effect is its time, written into the slot.
  constexpr std::size_t kChunk = 64;
  compact::ConcuryControl::Report connections[kChunk];
  std::uint64_t tags[kChunk];
  KnownSlot* slots[kChunk];
  bool hit[kChunk];
  bool fresh[kChunk];
  for (std::size_t base = 0; base < reports.size(); base += kChunk) {
    const std::span<const Report> chunk = reports.subspan(base, std::min(kChunk, reports.size() - base));
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      tags[i] = tag(chunk[i].connection.vip, chunk[i].connection.key);
      __builtin_prefetch(&known_slot(tags[i]));
    }
    std::size_t n = 0;
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      slots[i] = &known_slot(tags[i]);
      hit[i] = slots[i]->holds(tags[i]);
      if (!hit[i]) connections[n++] = chunk[i].connection;
      // The reports that may set an end (a new connection, a close) will write its entry: its line is
      // fetched while the chunk's misses are learnt.
      if (!hit[i] || is_close(chunk[i].met)) lives_.prefetch(tags[i]);
    }
    control_.learn_all(std::span(connections, n), std::span(fresh, n));
    for (std::size_t i = 0, unknown = 0; i < chunk.size(); ++i) {
      KnownSlot& slot = *slots[i];
      const bool learnt_fresh = !hit[i] && fresh[unknown++];
      // A miss whose connection an earlier report of this chunk put in the slot is taken as the hit it
      // would have been one by one: a control plane on a thread of its own batches the reports as the
      // ring holds them, and must decide as the worker does.
      if (!hit[i] && (learnt_fresh || !slot.holds(tags[i]))) {
        take_effect(chunk[i], tags[i], learnt_fresh, slot);
      } else if (slot.tag != tags[i] || chunk[i].met == Met::syn || is_close(chunk[i].met) ||
                 (chunk[i].met == Met::datagram && !slot.datagram_flow())) {
        // Perhaps half-open (the answer that ends it skips the find), evicted since, or a flow whose end
        // becomes a datagram flow's.
        take_effect(chunk[i], tags[i], false, slot);
      } else {
        slot.mark(chunk[i].at);
      }
    }
  }
}

void ConcuryLearning::kept(const Report& report, bool fresh) {
  const std::uint64_t t = tag(report.connection.vip, report.connection.key);
  take_effect(report, t, fresh, known_slot(t));
}

void ConcuryLearning::take_effect(const Report& report, std::uint64_t t, bool fresh, KnownSlot& slot) {
  if (report.met == Met::syn && !fresh && half_open_tag(t, report.at)) return;  // a retransmission
  if (fresh) ++learnt_count_;
  switch (report.met) {
    case Met::answer:
      if (fresh) end_at(t, report.at, kKnown);
      if (slot.tag != t) half_open_.erase(t);  // a slot of t without kHalfOpen is never half-open
      occupy(slot, t, 0);
      if (!fresh) slot.mark(report.at);
      return;
    case Met::client_fin:
    case Met::backend_fin:
    case Met::reset:
      take_close(report, t, fresh);
      if (slot.tag != t) half_open_.erase(t);
      occupy(slot, t, 0);
      if (!fresh) slot.mark(report.at);  // a half-closed connection lives on from it; a closed one's end is set
      return;
    case Met::datagram:
      if (fresh) count_opening(report);
      end_at(t, report.at, kDatagram);
      occupy(slot, t, 0);
      slot.seen = kDatagramFlow | kNoActivity;  // a datagram flow's end, counting this datagram
      return;
    case Met::syn:  // a new connection, on endpoints known or not
      end_at(t, report.at, kKnown).closes = 0;
      count_opening(report);
      half_open_[t] = report.at;
      handshakes_.emplace_back(report.at, t);
      occupy(slot, t, kHalfOpen);
      slot.seen = kNoActivity;  // a TCP connection's end, counting this SYN
      return;
  }
}

void ConcuryLearning::take_close(const Report& report, std::uint64_t t, bool fresh) {
  const std::uint8_t close = report.met == Met::client_fin ? kClientFin : report.met == Met::backend_fin ? kBackendFin : kReset;
  // A connection met at its close is learnt by it: at a FIN, half-closed, as long as any connection.
  Life& life = fresh ? end_at(t, report.at, kKnown) : lives_.at(t);
  life.closes |= close;
  if ((life.closes & kReset) != 0 || life.closes == (kClientFin | kBackendFin)) {
    set_end(t, life, end_of(report.at, lifetime(kClosing)), kClosing);
  }
}

void ConcuryLearning::occupy(KnownSlot& slot, std::uint64_t t, std::uint64_t bits) {
  if (!slot.holds(t)) {
    const std::uint64_t held = slot.tag & ~kHalfOpen;
    if (slot.activity_pending()) end_after_activity(held, lives_.at(held), slot.activity());
    slot.seen = kNoActivity;
  }
  slot.tag = t | bits;
}

bool ConcuryLearning::half_open(std::uint32_t service, std::uint64_t key, Nanos now) const {
  return half_open_tag(tag(service, key), now);
}

bool ConcuryLearning::half_open_tag(std::uint64_t t, Nanos now) const {
  const auto it = half_open_.find(t);
  return it != half_open_.end() && now - it->second < lifetimes_.handshake;
}

Nanos ConcuryLearning::lifetime(Timeout timeout) const {
  FLOWTRACK_ASSERT(timeout < kTimeouts, "a queue's timeout");
  const std::array<Nanos, kTimeouts> of_queue{lifetimes_.known, lifetimes_.closing, lifetimes_.datagram};
  return of_queue[timeout];
}

ConcuryLearning::Life& ConcuryLearning::end_at(std::uint64_t t, Nanos at, Timeout timeout) {
  const auto [it, inserted] = lives_.try_emplace(t, Life{0, 0, kKnown});
  if (inserted) peak_known_ = std::max(peak_known_, lives_.size());
  Life& life = it->second;
  set_end(t, life, end_of(at, lifetime(timeout)), timeout);
  return life;
}

void ConcuryLearning::end_after_activity(std::uint64_t t, Life& life, Nanos seen) {
  const auto timeout = static_cast<Timeout>(life.timeout);
  if (timeout == kClosing) return;
  const EndQueue& queue = queues_[timeout];
  const Nanos end = end_of(seen, lifetime(timeout));
  if (end <= life.end) return;
  set_end(t, life, queue.empty() ? end : std::max(end, queue.back().at), timeout);
}

void ConcuryLearning::set_end(std::uint64_t t, Life& life, Nanos end, Timeout timeout) {
  life.end = end;
  life.timeout = static_cast<std::uint8_t>(timeout);
  queues_[timeout].push_back({end, t});
  // The compaction moves queue entries only, never a life: `life` stays valid for the caller.
  if (queues_[kKnown].size() > 2 * lives_.size() + kCompactSlack) compact_known_queue();
}

void ConcuryLearning::compact_known_queue() {
  // Amortized O(1) an entry: at least half of the queue goes.
  std::erase_if(queues_[kKnown], [&](const End& e) {
    const auto it = lives_.find(e.tag);
    return it == lives_.end() || it->second.end != e.at;
  });
}

std::size_t ConcuryLearning::queued_ends() const {
  std::size_t n = 0;
  for (const EndQueue& queue : queues_) n += queue.size();
  return n;
}

void ConcuryLearning::count_opening(const Report& report) {
  if (new_connections_.size() <= report.connection.vip) new_connections_.resize(report.connection.vip + 1);
  std::vector<std::uint64_t>& of_service = new_connections_[report.connection.vip];
  if (of_service.size() <= report.backend) of_service.resize(report.backend + 1u, 0);
  ++of_service[report.backend];
}

std::size_t ConcuryLearning::expire(Nanos now, std::size_t budget) {
  while (!handshakes_.empty() && now - handshakes_.front().first >= lifetimes_.handshake) {
    const auto [at, t] = handshakes_.front();
    if (const auto it = half_open_.find(t); it != half_open_.end() && it->second == at) half_open_.erase(it);
    handshakes_.pop_front();
  }
  std::size_t forgotten = 0;
  // The queues merged by time, each entry handled once: when it is still its connection's end, the
  // connection is forgotten, unless it was reported since and is not closed: its end then moves.
  for (std::size_t handled = 0; handled < budget; ++handled) {
    const Timeout earliest = earliest_queue();
    if (earliest == kTimeouts || queues_[earliest].front().at > now) break;
    const End e = queues_[earliest].front();
    queues_[earliest].pop_front();
    const auto it = lives_.find(e.tag);
    if (it == lives_.end() || it->second.end != e.at) continue;
    if (KnownSlot& slot = known_slot(e.tag); slot.holds(e.tag) && slot.activity_pending()) {
      const Nanos seen = slot.activity();
      slot.mark(kNoActivity);
      end_after_activity(e.tag, it->second, seen);
      if (it->second.end > now) continue;
    }
    lives_.erase(it);
    forget(e.tag);
    ++forgotten;
  }
  forgotten_ += forgotten;
  return forgotten;
}

void ConcuryLearning::forget(std::uint64_t t) {
  FLOWTRACK_ASSERT(control_.dip_of(service_of_tag(t), key_of_tag(t)).has_value(), "a connection with an end is known");
  control_.forget(service_of_tag(t), key_of_tag(t));
  half_open_.erase(t);
  KnownSlot& slot = known_slot(t);
  if (slot.holds(t)) slot = {kEmpty, kNoActivity};
}

ConcuryLearning::Timeout ConcuryLearning::earliest_queue() const {
  Timeout earliest = kTimeouts;
  for (const Timeout q : {kKnown, kClosing, kDatagram}) {
    if (!queues_[q].empty() && (earliest == kTimeouts || queues_[q].front().at < queues_[earliest].front().at)) earliest = q;
  }
  return earliest;
}

std::optional<Nanos> ConcuryLearning::next_end() const {
  const Timeout earliest = earliest_queue();
  if (earliest == kTimeouts) return std::nullopt;
  return queues_[earliest].front().at;
}

std::optional<Nanos> ConcuryLearning::oldest_handshake() const {
  if (handshakes_.empty()) return std::nullopt;
  return handshakes_.front().first;
}

std::uint64_t ConcuryLearning::new_connections(std::uint32_t service, std::uint16_t backend) const {
  if (service >= new_connections_.size() || backend >= new_connections_[service].size()) return 0;
  return new_connections_[service][backend];
}

}  // namespace flowtrack
