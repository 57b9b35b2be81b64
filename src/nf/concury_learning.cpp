#include "flowtrack/nf/concury_learning.hpp"

#include <algorithm>
#include <utility>

namespace flowtrack {

ConcuryLearning::ConcuryLearning(compact::ConcuryControl control, Nanos forget_after)
    : control_(std::move(control)), forget_after_(forget_after) {}

void ConcuryLearning::learn_all(std::span<const Report> reports) {
  // In chunks, so that ConcuryControl::learn_all overlaps each chunk's misses with no scratch to keep.
  constexpr std::size_t kChunk = 64;
  compact::ConcuryControl::Report connections[kChunk];
  bool fresh[kChunk];
  for (std::size_t base = 0; base < reports.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, reports.size() - base);
    for (std::size_t i = 0; i < n; ++i) connections[i] = reports[base + i].connection;
    control_.learn_all(std::span(connections, n), std::span(fresh, n));
    for (std::size_t i = 0; i < n; ++i) {
      if (fresh[i]) remember(reports[base + i]);
    }
  }
}

void ConcuryLearning::kept(const Report& report) { remember(report); }

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
    control_.forget(learnt_.front().service, learnt_.front().key);
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
