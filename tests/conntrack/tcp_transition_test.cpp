// The per-packet TCP tracking reads a table the compiler fills from the rules (tcp_state.hpp): it must
// answer as the rules do for every state, closer, direction and every one of the 256 flag bytes, the
// flags the rules ignore (PSH, URG, ECE, CWR) included; and the one-way rules (a connection whose
// answers the tracker never sees) complete the handshake on the client's ACK alone.
#include <gtest/gtest.h>

#include "flowtrack/conntrack/tcp_state.hpp"

namespace flowtrack {
namespace {

TEST(TcpTransitions, TheTableAnswersAsTheRulesForEveryFlagByte) {
  for (std::size_t s = 0; s < kTcpStateCount; ++s) {
    for (const Direction closer : {Direction::original, Direction::reply}) {
      for (const Direction d : {Direction::original, Direction::reply}) {
        for (unsigned flags = 0; flags < 256; ++flags) {
          const TcpTracking t{static_cast<TcpState>(s), closer};
          const TcpTracking rule = tcp_transition(t, d, static_cast<std::uint8_t>(flags));
          const TcpTracking table = next_tcp_state(t, d, static_cast<std::uint8_t>(flags));
          ASSERT_EQ(table.state, rule.state) << tcp_state_name(t.state) << " flags " << flags;
          ASSERT_EQ(table.closer, rule.closer) << tcp_state_name(t.state) << " flags " << flags;
        }
      }
    }
  }
}

TEST(TcpTransitions, TheOneWayTableAnswersAsItsRulesForEveryFlagByte) {
  for (std::size_t s = 0; s < kTcpStateCount; ++s) {
    for (const Direction closer : {Direction::original, Direction::reply}) {
      for (unsigned flags = 0; flags < 256; ++flags) {
        const TcpTracking t{static_cast<TcpState>(s), closer};
        const TcpTracking rule = tcp_transition_one_way(t, static_cast<std::uint8_t>(flags));
        const TcpTracking table = next_tcp_state_one_way(t, static_cast<std::uint8_t>(flags));
        ASSERT_EQ(table.state, rule.state) << tcp_state_name(t.state) << " flags " << flags;
        ASSERT_EQ(table.closer, rule.closer) << tcp_state_name(t.state) << " flags " << flags;
      }
    }
  }
}

TEST(TcpTransitions, OneWayTheClientsAckAfterItsSynEstablishes) {
  using namespace tcpflag;
  TcpTracking t = tcp_transition_one_way({}, kSyn);
  EXPECT_EQ(t.state, TcpState::syn_sent);
  EXPECT_EQ(tcp_transition_one_way(t, kSyn).state, TcpState::syn_sent);  // a resent SYN
  t = tcp_transition_one_way(t, kAck | kPsh);
  EXPECT_EQ(t.state, TcpState::established);
  t = tcp_transition_one_way(t, kFin | kAck);
  EXPECT_EQ(t.state, TcpState::fin_wait);
  EXPECT_EQ(t.closer, Direction::original);
  // Both ways, the client's ACK alone proves nothing: the server's SYN+ACK must be seen.
  EXPECT_EQ(tcp_transition({TcpState::syn_sent, Direction::original}, Direction::original, kAck).state, TcpState::syn_sent);
}

}  // namespace
}  // namespace flowtrack
