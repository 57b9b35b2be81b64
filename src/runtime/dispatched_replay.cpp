#include "flowtrack/runtime/dispatched_replay.hpp"

#include <algorithm>
#include <stdexcept>

namespace flowtrack {

std::vector<std::uint32_t> arrival_order(const PacketPartition& partition) {
  std::vector<std::uint32_t> order;
  for (const auto& queue : partition.packets) order.insert(order.end(), queue.begin(), queue.end());
  std::sort(order.begin(), order.end());
  return order;
}

DispatchedReplay::DispatchedReplay(const PacketStore& trace, std::span<const std::uint32_t> packets,
                                   std::span<const PacketTag> tags, unsigned workers, const DispatchOptions& options)
    : options_(options), arena_(trace, packets), delivered_(workers) {
  if (!options.hash_in_software) {
    if (tags.size() != trace.size()) throw std::invalid_argument("a dispatched replay needs a tag per packet of the trace");
    tags_.reserve(packets.size());
    for (const std::uint32_t i : packets) tags_.push_back(tags[i]);
    for (auto& d : delivered_) d.reserve(packets.size() / workers + 1);
  }
  for (unsigned w = 0; w < workers; ++w) rings_.push_back(std::make_unique<SpscRing>(options.ring_capacity));
}

RingSource DispatchedReplay::source(unsigned worker, std::uint64_t& idle_polls) {
  return RingSource(*rings_[worker], arena_, done_, idle_polls, tags_.empty() ? nullptr : &delivered_[worker],
                    worker == 0 ? options_.slow_worker : std::chrono::nanoseconds(0));
}

void DispatchedReplay::dispatch(std::size_t burst) {
  Dispatcher dispatcher(options_, rings_, arena_, tags_);
  dispatched_ = dispatcher.run(burst);
  done_.store(true, std::memory_order_release);
}

std::vector<WorkerCounters> DispatchedReplay::counters() const {
  std::vector<WorkerCounters> counters(rings_.size());
  const std::vector<std::uint64_t> out_of_order =
      tags_.empty() ? std::vector<std::uint64_t>(rings_.size(), 0) : count_out_of_order(delivered_, tags_);
  for (std::size_t w = 0; w < counters.size(); ++w) {
    counters[w].ring_full = dispatched_.ring_full[w];
    counters[w].migrations_in = dispatched_.migrations_in[w];
    counters[w].out_of_order = out_of_order[w];
  }
  return counters;
}

}  // namespace flowtrack
