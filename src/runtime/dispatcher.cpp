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

Dispatcher::Dispatcher(const DispatchOptions& options, std::span<const std::unique_ptr<SpscRing>> rings, const ReplaySource& arena,
                       std::span<const PacketTag> tags)
    : options_(options),
      rings_(rings),
      arena_(arena),
      tags_(tags),
      rss_(static_cast<unsigned>(rings.size())),
      picker_(options.policy, static_cast<unsigned>(rings.size()), rings.empty() ? 1 : rings[0]->capacity()),
      popped_seen_(rings.size(), 0),
      counters_{std::vector<std::uint64_t>(rings.size(), 0), std::vector<std::uint64_t>(rings.size(), 0)} {
  FLOWTRACK_ASSERT(options.hash_in_software || tags.size() == arena.size(), "a tag for every slot");
  FLOWTRACK_ASSERT(!options.hash_in_software || options.policy == DispatchPolicy::rss, "only RSS hashes in software");
}

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
    if (options_.on_full == OnFull::drop && std::chrono::steady_clock::now() >= deadline) break;
  }
  counters_.ring_full[worker] += pending.size();
  picker_.left(worker, pending.size(), steady_picos());
}

unsigned Dispatcher::pick(std::uint32_t slot, Picos now) {
  if (options_.hash_in_software) return rss_.queue_of(arena_.frame(slot), arena_.link_type());
  bool migrated = false;
  const unsigned w = picker_.pick(tags_[slot], now, migrated);
  counters_.migrations_in[w] += migrated ? 1 : 0;
  return w;
}

DispatchCounters Dispatcher::run(std::size_t burst) {
  const auto workers = static_cast<unsigned>(rings_.size());
  std::vector<std::vector<std::uint32_t>> pending(workers);
  for (auto& p : pending) p.reserve(burst);
  const auto slots = static_cast<std::uint32_t>(arena_.size());
  for (unsigned pass = 0; pass < options_.passes; ++pass) {
    for (std::uint32_t first = 0; first < slots; first += static_cast<std::uint32_t>(burst)) {
      const Picos now = steady_picos();
      refresh_loads(now);
      const std::uint32_t last = std::min<std::uint32_t>(slots, first + static_cast<std::uint32_t>(burst));
      for (std::uint32_t slot = first; slot < last; ++slot) {
        const unsigned w = pick(slot, now);
        FLOWTRACK_ASSERT(w < workers, "the picker chooses one of the workers");
        pending[w].push_back(slot);
        picker_.handed(w);
      }
      for (unsigned w = 0; w < workers; ++w) {
        if (pending[w].empty()) continue;
        push(w, pending[w]);
        pending[w].clear();
      }
    }
  }
  return counters_;
}

}  // namespace flowtrack
