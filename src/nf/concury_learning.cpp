#include "flowtrack/nf/concury_learning.hpp"

#include <algorithm>
#include <utility>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

ConcuryLearning::ConcuryLearning(compact::ConcuryControl control, Nanos forget_after, Nanos handshake_timeout)
    : control_(std::move(control)),
      forget_after_(forget_after),
      handshake_timeout_(handshake_timeout),
      known_(std::size_t{1} << kKnownBits, kEmpty) {}

std::uint64_t ConcuryLearning::tag(std::uint32_t service, std::uint64_t key) {
  FLOWTRACK_ASSERT(key >> 48 == 0 && service < kMaxServices, "a client endpoint of one of fewer than 0x7fff services");
  return std::uint64_t{service} << 48 | key;
}

void ConcuryLearning::learn_all(std::span<const Report> reports) {
  // In chunks, so that ConcuryControl::learn_all overlaps each chunk's misses with no scratch to keep:
  // the chunk's cache slots prefetched, the reports that miss them learnt, then each taking effect. A
  // connection's reports stay in order: when its first one hits its slot all do, and take effect here
  // in order (a hit's effect leaves the slot a hit); when its first one misses all do (no slot is
  // written before the chunk's learning), and take effect after it in order.
  constexpr std::size_t kChunk = 64;
  compact::ConcuryControl::Report connections[kChunk];
  const Report* unknown[kChunk];
  std::uint64_t* slots[kChunk];  // the unknown ones' cache slots
  std::uint64_t tags[kChunk];
  bool fresh[kChunk];
  for (std::size_t base = 0; base < reports.size(); base += kChunk) {
    const std::span<const Report> chunk = reports.subspan(base, std::min(kChunk, reports.size() - base));
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      tags[i] = tag(chunk[i].connection.vip, chunk[i].connection.key);
      __builtin_prefetch(&known_slot(tags[i]));
    }
    std::size_t n = 0;
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      std::uint64_t& slot = known_slot(tags[i]);
      if (slot == tags[i]) {  // known, answered: only a SYN changes anything
        if (chunk[i].met == Met::syn) take_effect(chunk[i], false, slot);
        continue;
      }
      if (slot == (tags[i] | kHalfOpen)) {  // known, perhaps half-open: the answer that ends it skips the find
        take_effect(chunk[i], false, slot);
        continue;
      }
      unknown[n] = &chunk[i];
      slots[n] = &slot;
      connections[n++] = chunk[i].connection;
    }
    control_.learn_all(std::span(connections, n), std::span(fresh, n));
    for (std::size_t i = 0; i < n; ++i) take_effect(*unknown[i], fresh[i], *slots[i]);
  }
}

void ConcuryLearning::kept(const Report& report, bool fresh) {
  take_effect(report, fresh, known_slot(tag(report.connection.vip, report.connection.key)));
}

void ConcuryLearning::take_effect(const Report& report, bool fresh, std::uint64_t& slot) {
  const std::uint64_t t = tag(report.connection.vip, report.connection.key);
  if (report.met == Met::syn && !fresh && half_open_tag(t, report.at)) return;  // a retransmission
  if (fresh) remember(report);
  switch (report.met) {
    case Met::answer:
      half_open_.erase(t);
      slot = t;
      return;
    case Met::datagram:
      if (fresh) count_opening(report);
      slot = t;
      return;
    case Met::syn:  // a new connection, on endpoints known or not
      count_opening(report);
      half_open_[t] = report.at;
      handshakes_.emplace_back(report.at, t);
      slot = t | kHalfOpen;
      return;
  }
}

bool ConcuryLearning::half_open(std::uint32_t service, std::uint64_t key, Nanos now) const {
  return half_open_tag(tag(service, key), now);
}

bool ConcuryLearning::half_open_tag(std::uint64_t t, Nanos now) const {
  const auto it = half_open_.find(t);
  return it != half_open_.end() && now - it->second < handshake_timeout_;
}

void ConcuryLearning::remember(const Report& report) {
  learnt_.push_back({report.at, report.connection.vip, report.connection.key});
  ++learnt_count_;
}

void ConcuryLearning::count_opening(const Report& report) {
  if (new_connections_.size() <= report.connection.vip) new_connections_.resize(report.connection.vip + 1);
  std::vector<std::uint64_t>& of_service = new_connections_[report.connection.vip];
  if (of_service.size() <= report.backend) of_service.resize(report.backend + 1u, 0);
  ++of_service[report.backend];
}

std::size_t ConcuryLearning::expire(Nanos now, std::size_t budget) {
  while (!handshakes_.empty() && now - handshakes_.front().first >= handshake_timeout_) {
    const auto [at, t] = handshakes_.front();
    if (const auto it = half_open_.find(t); it != half_open_.end() && it->second == at) half_open_.erase(it);
    handshakes_.pop_front();
  }
  std::size_t n = 0;
  // now - at, not at + forget_after_: the timeout may be large enough to overflow the sum.
  while (n < budget && !learnt_.empty() && now - learnt_.front().at >= forget_after_) {
    const Learnt& gone = learnt_.front();
    control_.forget(gone.service, gone.key);
    std::uint64_t& slot = known_slot(tag(gone.service, gone.key));
    if ((slot & ~kHalfOpen) == tag(gone.service, gone.key)) slot = kEmpty;
    learnt_.pop_front();
    ++n;
  }
  forgotten_ += n;
  return n;
}

std::optional<Nanos> ConcuryLearning::oldest() const {
  if (learnt_.empty()) return std::nullopt;
  return learnt_.front().at;
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
