// What a NAT tells of its sessions as they change, for the standby of a pair (the sync link of a NAT
// pair): a session opened (with its mapping, so the standby can make both), refreshed (its protocol
// state and the time it has left, sent when the state changes and at most every kSyncRefresh while
// packets keep it alive), or closed (its mapping ends with its last session, as on the active).
//
// Nat44's third template parameter is where the events go. NoNatEvents, the default, makes none: every
// call that would emit one is compiled out, so a NAT without a pair pays nothing. A sink has
// `static constexpr bool kEnabled = true` and `void emit(const NatEvent&)`, called on the worker's
// thread, on the packet's path: it must be a few stores (a ring's push), never a system call.
#pragma once

#include <cstdint>

#include "flowtrack/util/time.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"

namespace flowtrack {

// How often at most a session that keeps its state sends a refresh while packets keep it alive: a
// standby's copy of its timer is then at most this much (and the link's batching) behind the active's.
inline constexpr Nanos kSyncRefresh = 5 * kNanosPerSecond;

struct NatEvent {
  enum class Kind : std::uint8_t { session_opened, session_refreshed, session_closed };
  Kind kind = Kind::session_opened;
  // opened, refreshed: everything; closed: its original tuple.
  SavedConnection<FlowKeyV4> connection;
  // opened: the mapping of its inside endpoint, and for a hairpin the inside peer's (protocol 0 if none).
  NatSnapshot::Mapping mapping, hairpin;
};

struct NoNatEvents {
  static constexpr bool kEnabled = false;
  void emit(const NatEvent&) {}
};

template <class Events>
concept NatEventSink = requires(Events& events, const NatEvent& event) {
  { Events::kEnabled } -> std::convertible_to<bool>;
  events.emit(event);
};

}  // namespace flowtrack
