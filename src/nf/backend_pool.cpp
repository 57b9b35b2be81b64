#include "flowtrack/nf/backend_pool.hpp"

#include <algorithm>

namespace flowtrack {

std::optional<LbPolicy> lb_policy_from_name(std::string_view name) {
  for (const LbPolicy policy : {LbPolicy::round_robin, LbPolicy::weighted_random, LbPolicy::maglev, LbPolicy::least_connections}) {
    if (name == lb_policy_name(policy)) return policy;
  }
  return std::nullopt;
}

std::string_view lb_policy_name(LbPolicy policy) {
  switch (policy) {
    case LbPolicy::round_robin: return "round_robin";
    case LbPolicy::weighted_random: return "weighted_random";
    case LbPolicy::maglev: return "maglev";
    case LbPolicy::least_connections: return "least_connections";
  }
  return "unknown";
}

Service::Service(ServiceConfig config, std::uint32_t maglev_size, const Service* same_pool)
    : config_(std::move(config)), maglev_(maglev_size) {
  for (const BackendConfig& b : config_.backends) backends_.push_back({b});
  rebuild(same_pool);
}

// The table depends on the backends taking new connections, their names and weights in order, and on
// its size only.
bool Service::has_pool_of(const Service& other) const {
  return maglev_.size() == other.maglev_.size() &&
         std::ranges::equal(backends_, other.backends_, [](const Backend& a, const Backend& b) {
           return a.removed == b.removed && a.down == b.down && a.config.name == b.config.name &&
                  a.config.weight == b.config.weight;
         });
}

void Service::rebuild(const Service* same_pool) {
  if (same_pool != nullptr && same_pool != this && has_pool_of(*same_pool)) {
    maglev_ = same_pool->maglev_;
    maglev_index_ = same_pool->maglev_index_;
    return;
  }
  std::vector<MaglevTable::Backend> live;
  maglev_index_.clear();
  for (std::uint32_t i = 0; i < backends_.size(); ++i) {
    if (!backends_[i].takes_new()) continue;
    live.push_back({backends_[i].config.name, backends_[i].config.weight});
    maglev_index_.push_back(i);
  }
  maglev_.populate(live);
}

void append_service(std::vector<Service>& services, const ServiceConfig& config, std::uint32_t maglev_size) {
  // Room first, so that the last service stays where it is while the new one reads it.
  if (services.size() == services.capacity()) services.reserve(std::max<std::size_t>(8, 2 * services.size()));
  const Service* last = services.empty() ? nullptr : &services.back();
  services.emplace_back(config, maglev_size, last);
}

Backend* Service::find(const std::string& name) {
  for (Backend& b : backends_) {
    if (b.config.name == name && !b.removed) return &b;
  }
  return nullptr;
}

std::uint32_t Service::choose(LbPolicy policy, std::uint32_t hash, Random& rng) {
  switch (policy) {
    case LbPolicy::maglev: return consistent_choice(hash);
    case LbPolicy::round_robin: {
      std::int64_t total = 0;
      Backend* best = nullptr;
      std::uint32_t best_index = kNoBackend;
      for (std::uint32_t i = 0; i < backends_.size(); ++i) {
        Backend& b = backends_[i];
        if (!b.takes_new()) continue;
        b.smooth_weight += b.config.weight;
        total += b.config.weight;
        if (best == nullptr || b.smooth_weight > best->smooth_weight) {
          best = &b;
          best_index = i;
        }
      }
      if (best != nullptr) best->smooth_weight -= total;
      return best_index;
    }
    case LbPolicy::weighted_random: {
      std::uint64_t total = 0;
      for (const Backend& b : backends_) total += b.takes_new() ? b.config.weight : 0;
      if (total == 0) return kNoBackend;
      std::uint64_t pick = rng.below(total);
      for (std::uint32_t i = 0; i < backends_.size(); ++i) {
        if (!backends_[i].takes_new()) continue;
        if (pick < backends_[i].config.weight) return i;
        pick -= backends_[i].config.weight;
      }
      return kNoBackend;
    }
    case LbPolicy::least_connections: {
      std::uint32_t best = kNoBackend;
      for (std::uint32_t i = 0; i < backends_.size(); ++i) {
        const Backend& b = backends_[i];
        if (!b.takes_new()) continue;
        // connections / weight compared without division: a.c * b.w < b.c * a.w.
        if (best == kNoBackend || b.connections * backends_[best].config.weight <
                                      backends_[best].connections * b.config.weight) {
          best = i;
        }
      }
      return best;
    }
  }
  return kNoBackend;
}

bool Service::add_backend(const BackendConfig& backend, const Service* same_pool) {
  if (find(backend.name) != nullptr) return false;
  // Back at the endpoint it was removed from: the same server, whose live connections are still its
  // own, takes its entry again, so that a backend that comes and goes (maintenance, a flapping health
  // check) does not grow the list that every index into it, and Concury's rewrite, walks.
  const auto returning = std::ranges::find_if(backends_, [&](const Backend& b) {
    return b.removed && b.config.name == backend.name && b.config.address == backend.address && b.config.port == backend.port;
  });
  if (returning != backends_.end()) {
    returning->removed = false;
    returning->config.weight = backend.weight;
    returning->smooth_weight = 0;
  } else {
    backends_.push_back({backend});
  }
  rebuild(same_pool);
  return true;
}

bool Service::set_weight(const std::string& name, std::uint32_t weight, const Service* same_pool) {
  Backend* b = find(name);
  if (b == nullptr) return false;
  b->config.weight = weight;
  b->smooth_weight = 0;
  rebuild(same_pool);
  return true;
}

bool Service::set_down(const std::string& name, bool down, const Service* same_pool) {
  Backend* b = find(name);
  if (b == nullptr) return false;
  if (b->down != down) {
    b->down = down;
    b->smooth_weight = 0;
    rebuild(same_pool);
  }
  return true;
}

bool Service::remove_backend(const std::string& name, const Service* same_pool) {
  Backend* b = find(name);
  if (b == nullptr) return false;
  b->removed = true;
  rebuild(same_pool);
  return true;
}

std::optional<std::string> Service::restore_backends(std::vector<Backend> backends, const Service* same_pool) {
  std::size_t taking_new = 0;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const Backend& b = backends[i];
    if (b.config.weight > kMaxBackendWeight) return "backend " + b.config.name + ": a weight above 1000000";
    for (std::size_t j = 0; j < i; ++j) {
      if (!b.removed && !backends[j].removed && backends[j].config.name == b.config.name) return "backend " + b.config.name + " twice";
    }
    taking_new += b.takes_new() ? 1 : 0;
  }
  if (taking_new > maglev_.size() / 100) return "more backends than the Maglev table's size allows";
  for (Backend& b : backends) {
    b.connections = 0;
    b.by_phase = {};
  }
  backends_ = std::move(backends);
  rebuild(same_pool);
  return std::nullopt;
}

}  // namespace flowtrack
