#include "flowtrack/conntrack/tcp_state.hpp"

#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

std::string_view tcp_state_name(TcpState state) {
  switch (state) {
    case TcpState::none: return "none";
    case TcpState::syn_sent: return "syn_sent";
    case TcpState::syn_recv: return "syn_recv";
    case TcpState::established: return "established";
    case TcpState::fin_wait: return "fin_wait";
    case TcpState::close_wait: return "close_wait";
    case TcpState::last_ack: return "last_ack";
    case TcpState::time_wait: return "time_wait";
    case TcpState::close: return "close";
    case TcpState::count_: break;
  }
  return "unknown";
}

TcpTracking next_tcp_state(TcpTracking t, Direction d, std::uint8_t flags) {
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

}  // namespace flowtrack
