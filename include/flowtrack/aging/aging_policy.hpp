// The aging contract: one concept that every expiry strategy in aging/ satisfies, so that the tracker,
// the runtime and the benchmarks program against the shape, not the strategy.
//
// A policy tracks, for each live FlowId of one table, the time after which the flow counts as idle:
// its deadline, `timeout` nanoseconds after its last packet. The caller drives it with the clock's
// `now` (read once per burst, never decreasing, see util/time.hpp):
//
//   policy.arm(id, now, timeout)          the table has just handed out `id` for a new flow
//   policy.touch(id, now)                 a packet of flow `id` arrived: the hot path, a few stores
//   policy.set_timeout(id, now, timeout)  the flow's timeout changed (a TCP state change); also a touch
//   policy.cancel(id)                     the flow left the table by other means (RST, eviction): the
//                                         policy forgets it and will not report it
//   policy.advance(now, budget, on_expire)  once per tick: reports expired flows, returns how many
//
// advance calls on_expire(FlowId) once for every flow whose deadline is <= now (a strategy may report
// it somewhat later, as its header states, never earlier), after which the policy has forgotten the
// flow: the id may be armed again at once. `budget` bounds the expiry work of one call (the timers or
// entries it handles, as each header defines); what does not fit is reported by later calls, never
// lost. The callback may arm, cancel, touch or set_timeout any flow, including the one it is told about.
//
// Who removes the entry from the table:
//  - kRemovesFromTable == false (wheel, heap): the policy knows ids only; the callback must erase the
//    flow from the table (the tracker keeps each flow's key by id for this).
//  - kRemovesFromTable == true (scan, lazy): the policy is bound to its table at construction and erases
//    the entry itself; the callback runs while the table is erasing it and must not call into the table.
//
// Each policy is single-threaded (one per core, like the tables it ages) and preallocates everything
// for `capacity` ids at construction: no call allocates.
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>

#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

namespace detail {
struct IgnoreExpiry {
  void operator()(FlowId) const {}
};
}  // namespace detail

template <class P>
concept AgingPolicy = requires(P& policy, const P& const_policy, FlowId id, Nanos now, Nanos timeout,
                               std::size_t budget) {
  { P::kName } -> std::convertible_to<std::string_view>;
  { P::kRemovesFromTable } -> std::convertible_to<bool>;
  { policy.arm(id, now, timeout) } -> std::same_as<void>;
  { policy.touch(id, now) } -> std::same_as<void>;
  { policy.set_timeout(id, now, timeout) } -> std::same_as<void>;
  { policy.cancel(id) } -> std::same_as<void>;
  { policy.advance(now, budget, detail::IgnoreExpiry{}) } -> std::same_as<std::size_t>;
  { const_policy.capacity() } -> std::same_as<std::size_t>;
  { const_policy.memory_bytes() } -> std::same_as<std::size_t>;
};

}  // namespace flowtrack
