#include "flowtrack/runtime/dispatched_run.hpp"

#include <algorithm>
#include <stdexcept>

namespace flowtrack {
namespace {

// Every packet of the partition, in trace order.
std::vector<std::uint32_t> arrival_order(const PacketPartition& partition) {
  std::vector<std::uint32_t> order;
  for (const auto& queue : partition.packets) order.insert(order.end(), queue.begin(), queue.end());
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<PacketTag> tags_by_slot(const PacketStore& trace, const PacketPartition& partition,
                                    std::span<const std::uint32_t> order) {
  if (partition.tags.size() != trace.size()) throw std::invalid_argument("a dispatched run needs a tag per packet of the trace");
  std::vector<PacketTag> tags;
  tags.reserve(order.size());
  for (const std::uint32_t i : order) tags.push_back(partition.tags[i]);
  return tags;
}

}  // namespace

DispatchedRun::DispatchedRun(const PacketStore& trace, const PacketPartition& partition, unsigned workers,
                             const DispatchOptions& options)
    : options_(options),
      order_(arrival_order(partition)),
      tags_(tags_by_slot(trace, partition, order_)),
      buffers_(trace, order_),
      delivered_(workers) {
  for (unsigned w = 0; w < workers; ++w) rings_.push_back(std::make_unique<SpscRing>(options.ring_capacity));
  for (auto& d : delivered_) d.reserve(tags_.size() / workers + 1);
}

RingSource DispatchedRun::source(unsigned worker) {
  return RingSource(*rings_[worker], buffers_, done_, worker == 0 ? options_.slow_worker : std::chrono::nanoseconds(0),
                    delivered_[worker]);
}

void DispatchedRun::dispatch(std::size_t burst) {
  Dispatcher dispatcher(options_, rings_);
  dispatched_ = dispatcher.run(tags_, burst);
  done_.store(true, std::memory_order_release);
}

std::vector<WorkerDispatchCounters> DispatchedRun::counters() const {
  const std::vector<std::uint64_t> out_of_order = count_out_of_order(delivered_, tags_);
  std::vector<WorkerDispatchCounters> counters(rings_.size());
  for (std::size_t w = 0; w < counters.size(); ++w) {
    counters[w] = {dispatched_.ring_full[w], dispatched_.migrations_in[w], out_of_order[w]};
  }
  return counters;
}

}  // namespace flowtrack
