// The per-packet TCP tracking reads a table the compiler fills from the rules (tcp_state.hpp): it must
// answer as the rules do for every state, closer, direction and every one of the 256 flag bytes, the
// flags the rules ignore (PSH, URG, ECE, CWR) included.
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

}  // namespace
}  // namespace flowtrack
