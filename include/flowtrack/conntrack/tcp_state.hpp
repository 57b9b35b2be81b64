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

#include <cstdint>
#include <string_view>

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
};

// The tracking after a packet with TCP `flags` travelling in `direction`.
TcpTracking next_tcp_state(TcpTracking current, Direction direction, std::uint8_t flags);

}  // namespace flowtrack
