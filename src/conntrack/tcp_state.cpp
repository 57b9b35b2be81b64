#include "flowtrack/conntrack/tcp_state.hpp"

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

std::string_view connection_phase_name(ConnectionPhase phase) {
  switch (phase) {
    case ConnectionPhase::opening: return "opening";
    case ConnectionPhase::established: return "established";
    case ConnectionPhase::closing: return "closing";
    case ConnectionPhase::count_: break;
  }
  return "unknown";
}

}  // namespace flowtrack
