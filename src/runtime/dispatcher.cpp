#include "flowtrack/runtime/dispatcher.hpp"

#include <algorithm>
#include <thread>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {
namespace {

Picos steady_picos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count() *
         1000;
}

}  // namespace

Dispatcher::Dispatcher(const DispatchOptions& options, std::span<const std::unique_ptr<SpscRing>> rings)
    : options_(options),
      rings_(rings),
      picker_(options.policy, static_cast<unsigned>(rings.size()), rings.empty() ? 1 : rings[0]->capacity()),
      popped_seen_(rings.size(), 0),
      counters_{std::vector<std::uint64_t>(rings.size(), 0), std::vector<std::uint64_t>(rings.size(), 0)} {}

void Dispatcher::refresh_loads(Picos now) {
  for (unsigned w = 0; w < rings_.size(); ++w) {
    const std::size_t popped = rings_[w]->popped();
    picker_.left(w, popped - popped_seen_[w], now);
    popped_seen_[w] = popped;
  }
}

void Dispatcher::push(unsigned worker, std::span<const std::uint32_t> pending) {
  SpscRing& ring = *rings_[worker];
  pending = pending.subspan(ring.push(pending));
  if (pending.empty()) return;
  const auto deadline = std::chrono::steady_clock::now() + options_.ring_wait;
  for (;;) {
    std::this_thread::yield();
    pending = pending.subspan(ring.push(pending));
    if (pending.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  counters_.ring_full[worker] += pending.size();
  picker_.left(worker, pending.size(), steady_picos());
}

DispatchCounters Dispatcher::run(std::span<const PacketTag> tags, std::size_t burst) {
  const auto workers = static_cast<unsigned>(rings_.size());
  std::vector<std::vector<std::uint32_t>> pending(workers);
  for (auto& p : pending) p.reserve(burst);
  for (std::size_t first = 0; first < tags.size(); first += burst) {
    const Picos now = steady_picos();
    refresh_loads(now);
    const std::size_t last = std::min(tags.size(), first + burst);
    for (std::size_t slot = first; slot < last; ++slot) {
      bool migrated = false;
      const unsigned w = picker_.pick(tags[slot], now, migrated);
      FLOWTRACK_ASSERT(w < workers, "the picker chooses one of the workers");
      counters_.migrations_in[w] += migrated ? 1 : 0;
      pending[w].push_back(static_cast<std::uint32_t>(slot));
      picker_.handed(w);
    }
    for (unsigned w = 0; w < workers; ++w) {
      if (pending[w].empty()) continue;
      push(w, pending[w]);
      pending[w].clear();
    }
  }
  return counters_;
}

}  // namespace flowtrack
