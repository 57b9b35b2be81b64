#include "flowtrack/nf/concury_learning.hpp"

#include <algorithm>
#include <utility>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

ConcuryLearning::ConcuryLearning(compact::ConcuryControl control, Nanos forget_after)
    : control_(std::move(control)), forget_after_(forget_after), known_(std::size_t{1} << kKnownBits, kEmpty) {}

std::uint64_t ConcuryLearning::tag(std::uint32_t service, std::uint64_t key) {
  FLOWTRACK_ASSERT(key >> 48 == 0 && service < 0xffff, "a client endpoint of one of fewer than 0xffff services");
  return std::uint64_t{service} << 48 | key;
}

void ConcuryLearning::learn_all(std::span<const Report> reports) {
  // In chunks, so that ConcuryControl::learn_all overlaps each chunk's misses with no scratch to keep:
  // the chunk's cache slots prefetched, the reports that miss them learnt, their slots written.
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
      if (slot == tags[i]) continue;
      unknown[n] = &chunk[i];
      slots[n] = &slot;
      connections[n++] = chunk[i].connection;
    }
    control_.learn_all(std::span(connections, n), std::span(fresh, n));
    for (std::size_t i = 0; i < n; ++i) {
      *slots[i] = tag(connections[i].vip, connections[i].key);
      if (fresh[i]) remember(*unknown[i]);
    }
  }
}

void ConcuryLearning::kept(const Report& report) {
  known_slot(tag(report.connection.vip, report.connection.key)) = tag(report.connection.vip, report.connection.key);
  remember(report);
}

void ConcuryLearning::remember(const Report& report) {
  learnt_.push_back({report.at, report.connection.vip, report.connection.key});
  ++learnt_count_;
  if (!report.opening) return;
  if (new_connections_.size() <= report.connection.vip) new_connections_.resize(report.connection.vip + 1);
  std::vector<std::uint64_t>& of_service = new_connections_[report.connection.vip];
  if (of_service.size() <= report.backend) of_service.resize(report.backend + 1u, 0);
  ++of_service[report.backend];
}

std::size_t ConcuryLearning::expire(Nanos now, std::size_t budget) {
  std::size_t n = 0;
  // now - at, not at + forget_after_: the timeout may be large enough to overflow the sum.
  while (n < budget && !learnt_.empty() && now - learnt_.front().at >= forget_after_) {
    const Learnt& gone = learnt_.front();
    control_.forget(gone.service, gone.key);
    std::uint64_t& slot = known_slot(tag(gone.service, gone.key));
    if (slot == tag(gone.service, gone.key)) slot = kEmpty;
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

std::uint64_t ConcuryLearning::new_connections(std::uint32_t service, std::uint16_t backend) const {
  if (service >= new_connections_.size() || backend >= new_connections_[service].size()) return 0;
  return new_connections_[service][backend];
}

}  // namespace flowtrack
