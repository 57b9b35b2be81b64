#include "flowtrack/nf/concury_learning.hpp"

#include <algorithm>
#include <utility>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

ConcuryLearning::ConcuryLearning(compact::ConcuryControl control, Lifetimes lifetimes)
    : control_(std::move(control)), lifetimes_(lifetimes), known_(std::size_t{1} << kKnownBits, kEmpty) {}

std::uint64_t ConcuryLearning::tag(std::uint32_t service, std::uint64_t key) {
  FLOWTRACK_ASSERT(key >> 48 == 0 && service < kMaxServices, "a client endpoint of one of fewer than 0x7fff services");
  return std::uint64_t{service} << 48 | key;
}

void ConcuryLearning::learn_all(std::span<const Report> reports) {
  // In chunks, so that ConcuryControl::learn_all overlaps each chunk's misses with no scratch to keep:
  // the chunk's cache slots prefetched and read, the reports that miss them learnt, then every report
  // taking effect in order (so ends are queued in report order, which is time order, however the
  // reports were batched). A report that hit its slot is known for sure (nothing is forgotten here);
  // it is skipped when its slot still says known and answered and it is neither a SYN nor a close.
  constexpr std::size_t kChunk = 64;
  compact::ConcuryControl::Report connections[kChunk];
  std::uint64_t tags[kChunk];
  std::uint64_t* slots[kChunk];
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
      hit[i] = (*slots[i] & ~kHalfOpen) == tags[i];
      if (!hit[i]) connections[n++] = chunk[i].connection;
      // The reports that may set an end (a new connection, a close) will write its entry: its line is
      // fetched while the chunk's misses are learnt.
      if (!hit[i] || is_close(chunk[i].met)) ends_.prefetch(tags[i]);
      if (is_close(chunk[i].met)) closes_.prefetch(tags[i]);
    }
    control_.learn_all(std::span(connections, n), std::span(fresh, n));
    for (std::size_t i = 0, unknown = 0; i < chunk.size(); ++i) {
      std::uint64_t& slot = *slots[i];
      if (!hit[i]) {
        take_effect(chunk[i], tags[i], fresh[unknown++], slot);
      } else if (slot != tags[i] || chunk[i].met == Met::syn || is_close(chunk[i].met)) {
        take_effect(chunk[i], tags[i], false, slot);  // perhaps half-open (the answer that ends it skips the find), or evicted since
      }
    }
  }
}

void ConcuryLearning::kept(const Report& report, bool fresh) {
  const std::uint64_t t = tag(report.connection.vip, report.connection.key);
  take_effect(report, t, fresh, known_slot(t));
}

void ConcuryLearning::take_effect(const Report& report, std::uint64_t t, bool fresh, std::uint64_t& slot) {
  if (report.met == Met::syn && !fresh && half_open_tag(t, report.at)) return;  // a retransmission
  if (fresh) ++learnt_count_;
  switch (report.met) {
    case Met::answer:
      if (fresh) end_at(t, report.at, lifetimes_.known, lasting_);
      if (slot != t) half_open_.erase(t);  // a slot of t without kHalfOpen is never half-open
      slot = t;
      return;
    case Met::client_fin:
    case Met::backend_fin:
    case Met::reset:
      take_close(report, t, fresh);
      if (slot != t) half_open_.erase(t);
      slot = t;
      return;
    case Met::datagram:
      if (fresh) {
        end_at(t, report.at, lifetimes_.known, lasting_);
        count_opening(report);
      }
      slot = t;
      return;
    case Met::syn:  // a new connection, on endpoints known or not
      end_at(t, report.at, lifetimes_.known, lasting_);
      closes_.erase(t);
      count_opening(report);
      half_open_[t] = report.at;
      handshakes_.emplace_back(report.at, t);
      slot = t | kHalfOpen;
      return;
  }
}

void ConcuryLearning::take_close(const Report& report, std::uint64_t t, bool fresh) {
  std::uint8_t& closes = closes_[t];
  closes |= report.met == Met::client_fin ? kClientFin : report.met == Met::backend_fin ? kBackendFin : kReset;
  if ((closes & kReset) != 0 || closes == (kClientFin | kBackendFin)) {
    end_at(t, report.at, lifetimes_.closing, closing_);
  } else if (fresh) {
    end_at(t, report.at, lifetimes_.known, lasting_);  // met at a FIN: half-closed, as long as any connection
  }
}

bool ConcuryLearning::half_open(std::uint32_t service, std::uint64_t key, Nanos now) const {
  return half_open_tag(tag(service, key), now);
}

bool ConcuryLearning::half_open_tag(std::uint64_t t, Nanos now) const {
  const auto it = half_open_.find(t);
  return it != half_open_.end() && now - it->second < lifetimes_.handshake;
}

void ConcuryLearning::end_at(std::uint64_t t, Nanos at, Nanos timeout, EndQueue& queue) {
  const Nanos end = end_of(at, timeout);
  ends_[t] = end;
  queue.push_back({end, t});
  if (lasting_.size() > 2 * ends_.size() + kCompactSlack) compact_lasting();
}

void ConcuryLearning::compact_lasting() {
  // Amortized O(1) an entry: at least half of the queue goes.
  std::erase_if(lasting_, [&](const End& e) {
    const auto it = ends_.find(e.tag);
    return it == ends_.end() || it->second != e.at;
  });
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
  // The two queues merged by time, each entry handled once: forgotten when it is still its connection's end.
  for (std::size_t handled = 0; handled < budget; ++handled) {
    if (lasting_.empty() && closing_.empty()) break;
    EndQueue& queue = lasting_ends_first() ? lasting_ : closing_;
    if (queue.front().at > now) break;
    const End e = queue.front();
    queue.pop_front();
    if (const auto it = ends_.find(e.tag); it != ends_.end() && it->second == e.at) {
      ends_.erase(it);
      forget(e.tag);
      ++forgotten;
    }
  }
  forgotten_ += forgotten;
  return forgotten;
}

void ConcuryLearning::forget(std::uint64_t t) {
  FLOWTRACK_ASSERT(control_.dip_of(service_of_tag(t), key_of_tag(t)).has_value(), "a connection with an end is known");
  control_.forget(service_of_tag(t), key_of_tag(t));
  half_open_.erase(t);
  closes_.erase(t);
  std::uint64_t& slot = known_slot(t);
  if ((slot & ~kHalfOpen) == t) slot = kEmpty;
}

bool ConcuryLearning::lasting_ends_first() const {
  return !lasting_.empty() && (closing_.empty() || lasting_.front().at <= closing_.front().at);
}

std::optional<Nanos> ConcuryLearning::next_end() const {
  if (lasting_.empty() && closing_.empty()) return std::nullopt;
  return (lasting_ends_first() ? lasting_ : closing_).front().at;
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
