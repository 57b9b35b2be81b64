// "scan": incremental scanning of the table, the simplest expiry of [conntrack-study]. Each advance() walks the
// next `positions_per_call` positions of the table through FlowTable::scan, compares each live flow's
// deadline (a flat array indexed by FlowId) with now, and erases the expired ones through the scan's
// visitor. The cursor wraps, so one sweep of the table takes scan_positions() / positions_per_call
// calls; the scan works over any FlowTable, whatever its internal layout.
//
// Accuracy: a flow is reported at the first pass of the cursor over its position after its deadline,
// that is up to one sweep late ([conntrack-study]: the sweep interval against the timeout sets how long dead
// flows hold table space). Never early.
//
// Budget: counts expired flows. When it runs out inside a position, the cursor stays on that position,
// so the next call looks at it again and nothing is skipped.
//
// Costs: touch: one load and one store in the flow's 16-byte deadline record (no table access). arm,
// set_timeout, cancel: one store. advance: positions_per_call table positions per call whether or not
// anything expires, each a likely cache miss in a large table, plus one deadline load per live flow
// met: the per-tick work is proportional to the table, not to the expiries. Memory per flow: 16 bytes.
// Concurrency: single thread, and the table must not be used by another thread during advance().
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>

#include "flowtrack/aging/aging_policy.hpp"
#include "flowtrack/aging/internal/flow_deadlines.hpp"

namespace flowtrack {

template <FlowTable Table>
class ScanAging {
 public:
  static constexpr std::string_view kName = "scan";
  static constexpr bool kRemovesFromTable = true;

  // Throws std::invalid_argument when positions_per_call is zero (the scan would never move).
  ScanAging(Table& table, std::size_t positions_per_call)
      : table_(table), deadlines_(table.capacity()), positions_per_call_(positions_per_call) {
    if (positions_per_call == 0) throw std::invalid_argument("scan aging: positions_per_call must be positive");
  }

  void arm(FlowId id, Nanos now, Nanos timeout) { deadlines_.restart(id, now, timeout); }
  void touch(FlowId id, Nanos now) { deadlines_.touch(id, now); }
  void set_timeout(FlowId id, Nanos now, Nanos timeout) { deadlines_.restart(id, now, timeout); }
  void cancel(FlowId id) { deadlines_.forget(id); }

  template <class OnExpire>
  std::size_t advance(Nanos now, std::size_t budget, OnExpire&& on_expire) {
    std::size_t expired = 0;
    // One position per table call, so that running out of budget can rewind to exactly that position.
    for (std::size_t step = 0; step < positions_per_call_ && expired < budget; ++step) {
      const std::size_t position = cursor_;
      bool out_of_budget = false;
      table_.scan(cursor_, 1, [&](const typename Table::key_type&, FlowId id) {
        if (!deadlines_.due(id, now)) return ScanAction::keep;
        if (expired == budget) {
          out_of_budget = true;
          return ScanAction::keep;
        }
        ++expired;
        deadlines_.forget(id);
        on_expire(id);
        return ScanAction::erase;
      });
      if (out_of_budget) cursor_ = position;
    }
    return expired;
  }

  Nanos deadline(FlowId id) const { return deadlines_.deadline(id); }
  std::size_t positions_per_call() const { return positions_per_call_; }
  // The number of advance() calls in one full sweep of the table.
  std::size_t calls_per_sweep() const {
    return (table_.scan_positions() + positions_per_call_ - 1) / positions_per_call_;
  }
  std::size_t capacity() const { return deadlines_.capacity(); }
  std::size_t memory_bytes() const { return sizeof(*this) + deadlines_.memory_bytes(); }

 private:
  Table& table_;
  FlowDeadlines deadlines_;
  std::size_t positions_per_call_;
  std::size_t cursor_ = 0;
};

}  // namespace flowtrack
