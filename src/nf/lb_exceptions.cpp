#include "flowtrack/nf/lb_exceptions.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace flowtrack {

std::optional<std::string> unshareable_backend_name(const StatefulLbConfig& config) {
  const auto too_long = [](const std::string& name) { return name.size() > kMaxSharedBackendName; };
  for (const ServiceConfig& s : config.services) {
    for (const BackendConfig& b : s.backends) {
      if (too_long(b.name)) return b.name;
    }
  }
  for (const PoolChange& c : config.changes) {
    if (too_long(c.backend.name)) return c.backend.name;
  }
  return std::nullopt;
}

LbExceptionEvent LbExceptionEvent::became(const FlowKeyV4& original, std::string_view backend) {
  if (backend.empty() || backend.size() > kMaxSharedBackendName) {
    throw std::invalid_argument("lb exceptions: a backend name of 1 to 64 characters is shared, not '" + std::string(backend) + "'");
  }
  LbExceptionEvent e{Kind::became, original, static_cast<std::uint8_t>(backend.size()), {}};
  std::ranges::copy(backend, e.backend_name.begin());
  return e;
}

bool LbPeerExceptions::install(std::uint8_t peer, const FlowKeyV4& original, std::string_view backend) {
  const std::unique_lock lock(mutex_);
  const auto found = entries_.find(original);
  if (found != entries_.end()) {
    found->second = {std::string(backend), peer};
    return true;
  }
  if (entries_.size() >= bound_) {
    refused_full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  entries_.emplace(original, Entry{std::string(backend), peer});
  size_.store(entries_.size(), std::memory_order_relaxed);
  return true;
}

void LbPeerExceptions::remove(std::uint8_t peer, const FlowKeyV4& original) {
  const std::unique_lock lock(mutex_);
  const auto found = entries_.find(original);
  if (found == entries_.end() || found->second.peer != peer) return;
  entries_.erase(found);
  size_.store(entries_.size(), std::memory_order_relaxed);
}

void LbPeerExceptions::forget(std::uint8_t peer) {
  const std::unique_lock lock(mutex_);
  absl::erase_if(entries_, [&](const auto& entry) { return entry.second.peer == peer; });
  size_.store(entries_.size(), std::memory_order_relaxed);
}

std::optional<std::string> LbPeerExceptions::find(const FlowKeyV4& original) const {
  const std::shared_lock lock(mutex_);
  const auto found = entries_.find(original);
  if (found == entries_.end()) return std::nullopt;
  return found->second.backend;
}

}  // namespace flowtrack
