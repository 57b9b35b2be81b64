// Per-flow deadline and timeout, in one flat array indexed by FlowId: the state the timer wheel and the
// incremental scan share. A packet's refresh is one load (the timeout) and one store (the deadline) in
// a single 16-byte record, so both fields always sit in the same cache line.
//
// Invariant: timeout <= kMaxTimeout and deadline is either kNever or now + timeout for some accepted
// now < kMaxTime, so deadline arithmetic never wraps.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/table/huge_page_allocator.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

class FlowDeadlines {
 public:
  explicit FlowDeadlines(std::size_t capacity) : flows_(capacity) {}

  // Starts (or restarts) the flow's idle period with a new timeout.
  void restart(FlowId id, Nanos now, Nanos timeout) {
    const Nanos bounded = std::min(timeout, kMaxTimeout);
    flows_[id] = {now + bounded, bounded};
  }

  // The same, with the period's end given: `deadline` (at most kMaxTime + kMaxTimeout).
  void restart_until(FlowId id, Nanos deadline, Nanos timeout) { flows_[id] = {deadline, std::min(timeout, kMaxTimeout)}; }

  void touch(FlowId id, Nanos now) {
    Flow& flow = flows_[id];
    flow.deadline = now + flow.timeout;
  }

  void prefetch(FlowId id) const { __builtin_prefetch(&flows_[id], 1); }
  // The flow will never be due, even if touched again, until restarted.
  void forget(FlowId id) { flows_[id] = {kNever, kMaxTimeout}; }

  Nanos deadline(FlowId id) const { return flows_[id].deadline; }
  bool due(FlowId id, Nanos now) const { return flows_[id].deadline <= now; }

  std::size_t capacity() const { return flows_.size(); }
  std::size_t memory_bytes() const { return flows_.capacity() * sizeof(Flow); }

 private:
  struct Flow {
    Nanos deadline = kNever;
    Nanos timeout = kMaxTimeout;
  };
  HugePageVector<Flow> flows_;
};

}  // namespace flowtrack
