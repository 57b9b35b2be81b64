// The TCP connection states a tracker follows from the packets it sees in both directions, and the
// transition function between them (in the spirit of Linux conntrack's table, written from RFC 793's
// state diagram as seen by a middlebox that watches both ends).
//
// A middlebox sees flags, not the endpoints' internal states, so the states are of the connection:
//   syn_sent     the original side sent a SYN
//   syn_recv     the reply side answered with SYN+ACK (or both sent SYNs: simultaneous open)
//   established  the handshake's final ACK was seen (or the connection was picked up mid-stream)
//   fin_wait     one side sent a FIN; `closer` remembers which
//   close_wait   the other side acknowledged that FIN but has not sent its own
//   last_ack     both sides sent FINs; waiting for the last acknowledgement
//   time_wait    the last FIN was acknowledged; a new SYN in the original direction reopens
//   close        a RST was seen
// Packets that make no sense in a state (a SYN+ACK on an established connection, say) leave it as it
// is: the tracker is not a firewall, and the timeouts clean up whatever is left.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

enum class Direction : std::uint8_t { original, reply };

inline constexpr Direction opposite(Direction d) {
  return d == Direction::original ? Direction::reply : Direction::original;
}

enum class TcpState : std::uint8_t {
  none,
  syn_sent,
  syn_recv,
  established,
  fin_wait,
  close_wait,
  last_ack,
  time_wait,
  close,
  count_,
};

inline constexpr std::size_t kTcpStateCount = static_cast<std::size_t>(TcpState::count_);

std::string_view tcp_state_name(TcpState state);

struct TcpTracking {
  TcpState state = TcpState::none;
  Direction closer = Direction::original;  // who sent the first FIN (meaningful from fin_wait on)

  bool operator==(const TcpTracking&) const = default;
};

// What a gauge of live connections says of one (runtime/live_counters.hpp): opening (a TCP handshake
// under way), established (the handshake done, or the connection picked up mid-stream; every UDP or
// other flow, which has no handshake), closing (a FIN seen, TIME_WAIT, or after a RST: the connection
// is ending, and stays tracked until its closing timeout).
enum class ConnectionPhase : std::uint8_t { opening, established, closing, count_ };
inline constexpr std::size_t kConnectionPhaseCount = static_cast<std::size_t>(ConnectionPhase::count_);

std::string_view connection_phase_name(ConnectionPhase phase);

// A TCP connection's phase by its state (`none`: created, before its first packet's update), indexed
// by TcpState.
inline constexpr std::array<ConnectionPhase, kTcpStateCount> kTcpPhases = {
    ConnectionPhase::opening,      // none
    ConnectionPhase::opening,      // syn_sent
    ConnectionPhase::opening,      // syn_recv
    ConnectionPhase::established,  // established
    ConnectionPhase::closing,      // fin_wait
    ConnectionPhase::closing,      // close_wait
    ConnectionPhase::closing,      // last_ack
    ConnectionPhase::closing,      // time_wait
    ConnectionPhase::closing,      // close
};
constexpr ConnectionPhase tcp_phase(TcpState state) { return kTcpPhases[static_cast<std::size_t>(state)]; }

// The rules: the tracking after a packet with TCP `flags` travelling in direction `d`. Only FIN, SYN,
// RST and ACK matter.
constexpr TcpTracking tcp_transition(TcpTracking t, Direction d, std::uint8_t flags) {
  using enum TcpState;
  const bool syn = (flags & tcpflag::kSyn) != 0;
  const bool ack = (flags & tcpflag::kAck) != 0;
  const bool fin = (flags & tcpflag::kFin) != 0;
  if ((flags & tcpflag::kRst) != 0) return {close, t.closer};

  if (syn && !ack) {
    if (d == Direction::original) {
      // A first SYN, a retransmitted one, or a new connection reusing a finished tuple.
      if (t.state == none || t.state == syn_sent || t.state == time_wait || t.state == close) return {syn_sent, t.closer};
    } else if (t.state == syn_sent) {
      return {syn_recv, t.closer};  // simultaneous open: both sides sent a SYN
    }
    return t;
  }
  if (syn && ack) {
    if (t.state == syn_sent || t.state == syn_recv) return {syn_recv, t.closer};
    if (t.state == none) return {syn_recv, t.closer};  // picked up at the SYN+ACK
    return t;
  }
  if (fin) {
    switch (t.state) {
      case none:
      case syn_sent:
      case syn_recv:
      case established: return {fin_wait, d};
      case fin_wait:
      case close_wait: return d != t.closer ? TcpTracking{last_ack, t.closer} : t;
      default: return t;
    }
  }
  if (ack) {
    switch (t.state) {
      case none: return {established, t.closer};  // picked up mid-stream
      case syn_recv: return {established, t.closer};
      case fin_wait: return d != t.closer ? TcpTracking{close_wait, t.closer} : t;
      case last_ack: return d == t.closer ? TcpTracking{time_wait, t.closer} : t;
      default: return t;
    }
  }
  return t;
}

// The same rules for a connection whose answers the tracker never sees (a load balancer in tunnel
// mode: the backends answer the clients directly). Every packet travels in the original direction, and
// the client's first ACK after its SYN, which acknowledges the SYN+ACK the tracker did not see, completes
// the handshake; the rest is as both ways.
constexpr TcpTracking tcp_transition_one_way(TcpTracking t, std::uint8_t flags) {
  const bool ack_alone = (flags & (tcpflag::kFin | tcpflag::kSyn | tcpflag::kRst | tcpflag::kAck)) == tcpflag::kAck;
  if (ack_alone && t.state == TcpState::syn_sent) return {TcpState::established, t.closer};
  return tcp_transition(t, Direction::original, flags);
}

namespace detail {
// The four flags the rules read, packed into 4 bits: FIN, SYN, RST as they lie, ACK (0x10) as 0x08.
constexpr std::size_t tcp_flag_bits(std::uint8_t flags) { return (flags & 0x07u) | ((flags >> 1) & 0x08u); }
// Which rules a packet takes: a direction's (tcp_transition) or the one-way connection's.
enum class TcpRules : std::uint8_t { original, reply, one_way };
constexpr TcpRules rules_of(Direction d) { return d == Direction::original ? TcpRules::original : TcpRules::reply; }
constexpr TcpTracking tcp_transition_by(TcpTracking t, TcpRules rules, std::uint8_t flags) {
  if (rules == TcpRules::one_way) return tcp_transition_one_way(t, flags);
  return tcp_transition(t, rules == TcpRules::original ? Direction::original : Direction::reply, flags);
}
constexpr std::size_t tcp_transition_index(TcpTracking t, TcpRules rules, std::uint8_t flags) {
  return ((static_cast<std::size_t>(t.state) * 2 + static_cast<std::size_t>(t.closer)) * 3 + static_cast<std::size_t>(rules)) *
             16 +
         tcp_flag_bits(flags);
}
// tcp_transition_by for every state, closer, rules and flag bits, computed by the compiler.
inline constexpr auto kTcpTransitions = [] {
  std::array<TcpTracking, kTcpStateCount * 2 * 3 * 16> table{};
  for (std::size_t s = 0; s < kTcpStateCount; ++s) {
    for (const Direction closer : {Direction::original, Direction::reply}) {
      for (const TcpRules rules : {TcpRules::original, TcpRules::reply, TcpRules::one_way}) {
        for (unsigned f = 0; f < 0x20; ++f) {
          const TcpTracking t{static_cast<TcpState>(s), closer};
          table[tcp_transition_index(t, rules, static_cast<std::uint8_t>(f))] =
              tcp_transition_by(t, rules, static_cast<std::uint8_t>(f));
        }
      }
    }
  }
  return table;
}();
}  // namespace detail

// tcp_transition on the per-packet path: one read of the table (2 KiB) instead of the rules' branches.
// `current` must be a tracking the rules produce (a state below count_).
inline TcpTracking next_tcp_state(TcpTracking current, Direction direction, std::uint8_t flags) {
  return detail::kTcpTransitions[detail::tcp_transition_index(current, detail::rules_of(direction), flags)];
}

// tcp_transition_one_way the same way.
inline TcpTracking next_tcp_state_one_way(TcpTracking current, std::uint8_t flags) {
  return detail::kTcpTransitions[detail::tcp_transition_index(current, detail::TcpRules::one_way, flags)];
}

}  // namespace flowtrack
