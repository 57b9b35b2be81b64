// Concury's learning (nf/internal/concury_learning.hpp): reports of known connections are skipped by its cache
// of known connections exactly when learning them would change nothing, and a forgotten connection is
// learnt again when reported again (the cache never answers for a connection the control plane does
// not know); a SYN is a retransmission only while its connection is half-open, and opens a new
// connection on known endpoints otherwise; a connection closed (a FIN of each side, or an RST) ends the
// closing timeout after its last close, any other the long timeout after its opening, however long one
// side of it has been closed; the queued ends stay in proportion to the connections known; all of it
// whether the reports come one by one or in one batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <span>
#include <vector>

#include "flowtrack/nf/internal/concury_learning.hpp"

namespace flowtrack {
namespace {

constexpr Nanos kForgetAfter = 100;
constexpr Nanos kHandshakeTimeout = 20;
constexpr Nanos kClosing = 30;
constexpr Nanos kDatagram = 40;
constexpr Nanos kNotSeen = ~Nanos{0};

ConcuryLearning make_learning(Nanos forget_after = kForgetAfter) {
  compact::ConcuryControl control;
  control.add_vip({0, 1, 2}, {1, 1, 1});
  control.add_vip({0, 1}, {1, 1});
  return ConcuryLearning(std::move(control),
                         {.known = forget_after, .handshake = kHandshakeTimeout, .closing = kClosing, .datagram = kDatagram});
}

using Met = ConcuryLearning::Met;

ConcuryLearning::Report report(std::uint32_t service, std::uint64_t key, Nanos at, Met met = Met::syn) {
  return {{.key = key, .vip = service, .dcode = static_cast<std::uint32_t>(key % 4096)}, at, 0, met};
}

TEST(ConcuryLearning, ReportsOfKnownConnectionsLearnNothingMore) {
  ConcuryLearning learning = make_learning();
  std::vector<ConcuryLearning::Report> reports;
  for (std::uint64_t k = 1; k <= 500; ++k) reports.push_back(report(0, k, 1));
  for (std::uint64_t k = 1; k <= 500; ++k) reports.push_back(report(0, k, 2, Met::answer));  // their answers
  for (std::uint64_t k = 1; k <= 500; ++k) reports.push_back(report(1, k, 3));          // another service's
  learning.learn_all(reports);
  EXPECT_EQ(learning.learnt(), 1000u);
  EXPECT_EQ(learning.control().connections(0), 500u);
  EXPECT_EQ(learning.control().connections(1), 500u);
  EXPECT_EQ(learning.new_connections(0, 0), 500u);  // openings only
  for (std::uint64_t k = 1; k <= 500; ++k) ASSERT_EQ(learning.control().dip_of(0, k), learning.control().dip_at(0, k % 4096));
}

TEST(ConcuryLearning, AForgottenConnectionIsLearntAgainWhenReportedAgain) {
  ConcuryLearning learning = make_learning();
  std::vector<ConcuryLearning::Report> reports;
  for (std::uint64_t k = 1; k <= 300; ++k) reports.push_back(report(0, k, 10));
  learning.learn_all(reports);
  EXPECT_EQ(learning.expire(10 + kForgetAfter, 1000), 300u);
  EXPECT_EQ(learning.control().connections(0), 0u);
  for (ConcuryLearning::Report& r : reports) r.at = 200;
  learning.learn_all(reports);  // the same connections: unknown again, so learnt again
  EXPECT_EQ(learning.control().connections(0), 300u);
  EXPECT_EQ(learning.learnt(), 600u);
  EXPECT_EQ(learning.forgotten(), 300u);
  EXPECT_EQ(learning.next_end(), Nanos{200 + kForgetAfter});
}

TEST(ConcuryLearning, AConnectionKeptAtASyncPointIsKnownToLaterReports) {
  ConcuryLearning learning = make_learning();
  learning.control().keep(0, 42, 2);
  learning.kept(report(0, 42, 5, Met::answer), true);  // a repair
  learning.learn_all(std::vector{report(0, 42, 6, Met::answer)});
  EXPECT_EQ(learning.learnt(), 1u);
  EXPECT_EQ(learning.control().dip_of(0, 42), std::optional<std::uint16_t>{2});
}

// RFC 9293, 3.10.7.4: a SYN inside a synchronized connection changes nothing there, so a client sends
// one only for a new connection; while the first is unanswered it may resend it.
TEST(ConcuryLearning, ASynOfAnAnsweredConnectionOpensANewOneAndAResentSynDoesNot) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 7, 1), report(0, 7, 2)});  // a SYN and its retransmission
  EXPECT_EQ(learning.new_connections(0, 0), 1u);
  EXPECT_TRUE(learning.half_open(0, 7, 2));
  learning.learn_all(std::vector{report(0, 7, 3, Met::answer), report(0, 7, 4, Met::answer)});
  EXPECT_FALSE(learning.half_open(0, 7, 4));
  learning.learn_all(std::vector{report(0, 7, 5)});  // the endpoints' next connection
  EXPECT_EQ(learning.new_connections(0, 0), 2u);
  EXPECT_TRUE(learning.half_open(0, 7, 5));
  EXPECT_EQ(learning.learnt(), 1u);  // one entry for the endpoints
  EXPECT_EQ(learning.control().connections(0), 1u);
}

TEST(ConcuryLearning, AConnectionMetMidStreamIsNotHalfOpenAndADatagramFlowOpensOnce) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 8, 1, Met::answer), report(0, 8, 2)});
  EXPECT_EQ(learning.new_connections(0, 0), 1u);  // the SYN, not the answer met mid-stream
  learning.learn_all(std::vector{report(1, 9, 1, Met::datagram), report(1, 9, 2, Met::datagram), report(1, 9, 3, Met::datagram)});
  EXPECT_EQ(learning.new_connections(1, 0), 1u);
  EXPECT_FALSE(learning.half_open(1, 9, 3));
}

TEST(ConcuryLearning, AHalfOpenConnectionEndsWithTheHandshakeTimeout) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 5, 10)});
  EXPECT_TRUE(learning.half_open(0, 5, 10 + kHandshakeTimeout - 1));
  EXPECT_FALSE(learning.half_open(0, 5, 10 + kHandshakeTimeout));
  EXPECT_EQ(learning.oldest_handshake(), Nanos{10});
  learning.expire(10 + kHandshakeTimeout, 1000);
  EXPECT_EQ(learning.oldest_handshake(), std::nullopt);
  EXPECT_EQ(learning.control().connections(0), 1u);  // the connection stays known
  learning.learn_all(std::vector{report(0, 5, 10 + kHandshakeTimeout)});
  EXPECT_EQ(learning.new_connections(0, 0), 2u);
}

// learn_all reads the cache of a chunk's reports before it learns them: a connection's reports must
// still take effect in their order (a SYN that hits the cache, then the connection's answer, then a
// retransmission), as one learn_all a report gives.
TEST(ConcuryLearning, ABatchHasTheEffectOfItsReportsOneByOne) {
  std::vector<ConcuryLearning::Report> reports;
  for (std::uint64_t k = 1; k <= 40; ++k) {
    reports.push_back(report(0, k, 1));
    reports.push_back(report(0, k, 2, Met::answer));
  }
  for (std::uint64_t k = 1; k <= 40; ++k) {
    const Met pattern[] = {Met::answer, Met::syn, Met::client_fin, Met::answer, Met::backend_fin, Met::syn, Met::reset, Met::answer};
    for (std::size_t i = 0; i < std::size(pattern); ++i) reports.push_back(report(0, k, 3 + (i + k) % 5, pattern[(i + k) % 8]));
  }
  ConcuryLearning batched = make_learning(), single = make_learning();
  batched.learn_all(std::vector(reports.begin(), reports.begin() + 80));  // answered, and cached
  batched.learn_all(std::vector(reports.begin() + 80, reports.end()));
  for (const ConcuryLearning::Report& r : reports) single.learn_all(std::vector{r});
  EXPECT_EQ(batched.new_connections(0, 0), single.new_connections(0, 0));
  EXPECT_GT(single.new_connections(0, 0), 80u);
  for (std::uint64_t k = 1; k <= 40; ++k) ASSERT_EQ(batched.half_open(0, k, 8), single.half_open(0, k, 8)) << k;
  for (Nanos t = 8; t < 8 + kForgetAfter; t += 4) {  // and the same ends
    ASSERT_EQ(batched.expire(t, 1000), single.expire(t, 1000)) << t;
    ASSERT_EQ(batched.control().connections(0), single.control().connections(0)) << t;
  }
  EXPECT_GT(single.forgotten(), 0u);
}

// Reports of every kind on few endpoints (so a chunk often holds several of one connection, the first
// of which makes it known), learnt in batches split at random and one by one, with expiry between the
// batches as the data plane's sync points call it: the same connections known, and forgotten at the
// same times. A control plane on a thread of its own takes the reports in whatever batches the ring
// holds, and must decide as the worker would.
TEST(ConcuryLearning, AnySplitOfTheReportsIntoBatchesHasTheSameEffect) {
  std::mt19937_64 random(20261127);
  const Met kinds[] = {Met::syn, Met::datagram, Met::answer, Met::client_fin, Met::backend_fin, Met::reset};
  for (int trial = 0; trial < 20; ++trial) {
    ConcuryLearning batched = make_learning(), single = make_learning();
    Nanos t = 0;
    for (int epoch = 0; epoch < 60; ++epoch) {
      std::vector<ConcuryLearning::Report> reports;
      const std::size_t count = random() % 200;
      for (std::size_t i = 0; i < count; ++i) {
        t += random() % 2;
        reports.push_back(report(random() % 2, 1 + random() % 24, t, kinds[random() % std::size(kinds)]));
      }
      for (std::size_t begin = 0; begin < reports.size();) {
        const std::size_t end = std::min(reports.size(), begin + 1 + random() % 150);
        batched.learn_all(std::span(reports).subspan(begin, end - begin));
        begin = end;
      }
      for (const ConcuryLearning::Report& r : reports) single.learn_all(std::span(&r, 1));
      t += random() % 8;
      ASSERT_EQ(batched.expire(t, 1000), single.expire(t, 1000)) << "trial " << trial << ", epoch " << epoch;
      for (std::uint32_t service = 0; service < 2; ++service) {
        for (std::uint64_t k = 1; k <= 24; ++k) {
          ASSERT_EQ(batched.control().dip_of(service, k).has_value(), single.control().dip_of(service, k).has_value())
              << "trial " << trial << ", epoch " << epoch << ", service " << service << ", key " << k;
          ASSERT_EQ(batched.half_open(service, k, t), single.half_open(service, k, t));
        }
      }
    }
    EXPECT_EQ(batched.learnt(), single.learnt());
    EXPECT_EQ(batched.forgotten(), single.forgotten());
    EXPECT_GT(single.forgotten(), 0u);
  }
}

// A FIN of each side closes the connection: it is forgotten the closing timeout after the last close
// reported (a resent FIN included), however long the long timeout; one that never closes lives the
// long timeout after its last report (here its answer).
TEST(ConcuryLearning, AConnectionIsForgottenTheClosingTimeoutAfterItsLastClose) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 1, 1), report(0, 1, 2, Met::answer), report(0, 2, 1), report(0, 2, 2, Met::answer)});
  learning.learn_all(std::vector{report(0, 1, 5, Met::client_fin), report(0, 1, 7, Met::backend_fin)});
  learning.learn_all(std::vector{report(0, 1, 9, Met::backend_fin)});  // resent
  EXPECT_EQ(learning.expire(9 + kClosing - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(9 + kClosing, 1000), 1u);
  EXPECT_FALSE(learning.control().dip_of(0, 1).has_value());
  EXPECT_TRUE(learning.control().dip_of(0, 2).has_value());
  EXPECT_EQ(learning.expire(2 + kForgetAfter - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(2 + kForgetAfter, 1000), 1u);
  EXPECT_EQ(learning.next_end(), std::nullopt);
}

// Met only at its close (its opening and answers before this instance's time), a connection is learnt,
// and is no new connection of its backend: for the closing timeout when that close is an RST, and as
// any learnt connection when it is a FIN (the other side may go on sending).
TEST(ConcuryLearning, AConnectionMetAtItsCloseIsKnownUntilTheClosingTimeoutIfClosed) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(1, 3, 4, Met::reset), report(1, 5, 4, Met::client_fin)});
  EXPECT_EQ(learning.learnt(), 2u);
  EXPECT_EQ(learning.new_connections(1, 0), 0u);
  EXPECT_EQ(learning.next_end(), Nanos{4 + kClosing});
  EXPECT_EQ(learning.expire(4 + kClosing, 1000), 1u);
  EXPECT_TRUE(learning.control().dip_of(1, 5).has_value());
  EXPECT_EQ(learning.expire(4 + kForgetAfter, 1000), 1u);
}

// After one side's FIN the other may send for as long as it likes (RFC 9293, 3.6): a half-closed
// connection lives as any open one (the long timeout after its last report), and ends the closing
// timeout after the other side's FIN; a SYN on its endpoints after it opens a connection of which no
// side has closed.
TEST(ConcuryLearning, AHalfClosedConnectionIsKeptUntilItsOtherSideClosesRfc9293Section3_6) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 1, 1), report(0, 1, 2, Met::answer), report(0, 2, 1), report(0, 2, 2, Met::answer)});
  learning.learn_all(std::vector{report(0, 1, 3, Met::client_fin), report(0, 2, 3, Met::backend_fin)});
  EXPECT_EQ(learning.expire(3 + kClosing, 1000), 0u);
  learning.learn_all(std::vector{report(0, 1, 50, Met::backend_fin)});
  EXPECT_EQ(learning.expire(50 + kClosing, 1000), 1u);  // connection 1, closed at 50
  EXPECT_TRUE(learning.control().dip_of(0, 2).has_value());
  EXPECT_EQ(learning.expire(3 + kForgetAfter - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(3 + kForgetAfter, 1000), 1u);  // connection 2, half-closed, the long timeout after its FIN

  learning.learn_all(std::vector{report(0, 7, 200), report(0, 7, 201, Met::answer), report(0, 7, 202, Met::client_fin)});
  learning.learn_all(std::vector{report(0, 7, 300), report(0, 7, 301, Met::answer), report(0, 7, 302, Met::backend_fin)});
  EXPECT_EQ(learning.expire(302 + kClosing, 1000), 0u);  // the new connection is half-closed only
  EXPECT_EQ(learning.expire(302 + kForgetAfter, 1000), 1u);
}

// Every report of a connection that is not closed moves its end: a TCP connection lives the long
// timeout after its last answer, however long ago it opened, so a connection that lasts is protected
// from rewrites for as long as its backend answers; a datagram flow lives the datagram timeout after
// its last datagram or answer. A closed connection's end stays the closing timeout after its last
// close, whatever comes after.
TEST(ConcuryLearning, AConnectionLivesItsTimeoutAfterItsLastReportUnlessClosed) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 1, 1), report(0, 1, 2, Met::answer)});
  for (const Nanos at : {50, 90, 130}) learning.learn_all(std::vector{report(0, 1, at, Met::answer)});
  EXPECT_EQ(learning.expire(130 + kForgetAfter - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(130 + kForgetAfter, 1000), 1u);

  learning.learn_all(std::vector{report(1, 2, 300, Met::datagram)});
  learning.learn_all(std::vector{report(1, 2, 330, Met::answer)});
  EXPECT_EQ(learning.expire(330 + kDatagram - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(330 + kDatagram, 1000), 1u);

  learning.learn_all(std::vector{report(0, 3, 500), report(0, 3, 501, Met::answer), report(0, 3, 502, Met::client_fin),
                                 report(0, 3, 503, Met::backend_fin)});
  learning.learn_all(std::vector{report(0, 3, 520, Met::answer)});  // a last ACK
  EXPECT_EQ(learning.expire(503 + kClosing - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(503 + kClosing, 1000), 1u);
  EXPECT_EQ(learning.control().connections(0) + learning.control().connections(1), 0u);
}

// A client's RST ends its connection's handshake: a SYN after it opens the next connection, which lives
// the long timeout from that SYN, not from the first connection's learning (nor its close).
TEST(ConcuryLearning, TheNextConnectionOnClosedEndpointsLivesTheLongTimeoutFromItsSyn) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(0, 6, 1), report(0, 6, 2, Met::reset), report(0, 6, 3)});
  EXPECT_EQ(learning.new_connections(0, 0), 2u);
  EXPECT_TRUE(learning.half_open(0, 6, 3));
  EXPECT_EQ(learning.expire(2 + kClosing, 1000), 0u);
  EXPECT_EQ(learning.expire(1 + kForgetAfter, 1000), 0u);
  EXPECT_EQ(learning.expire(3 + kForgetAfter, 1000), 1u);
  EXPECT_EQ(learning.learnt(), 1u);
  EXPECT_EQ(learning.forgotten(), 1u);
}

// A datagram flow ends the datagram timeout after its last datagram, not after its first: the datagrams
// the cache knows only mark their slot, and the flow's end moves to the last of them when it comes.
TEST(ConcuryLearning, ADatagramFlowEndsTheDatagramTimeoutAfterItsLastDatagram) {
  ConcuryLearning learning = make_learning();
  learning.learn_all(std::vector{report(1, 1, 1, Met::datagram), report(1, 2, 1, Met::datagram)});
  learning.learn_all(std::vector{report(1, 1, 10, Met::datagram), report(1, 1, 30, Met::datagram)});
  EXPECT_EQ(learning.expire(1 + kDatagram, 1000), 1u);  // flow 2; flow 1's end moves to 30 + kDatagram
  EXPECT_TRUE(learning.control().dip_of(1, 1).has_value());
  EXPECT_EQ(learning.expire(30 + kDatagram - 1, 1000), 0u);
  EXPECT_EQ(learning.expire(30 + kDatagram, 1000), 1u);
  EXPECT_EQ(learning.learnt(), 2u);
  EXPECT_EQ(learning.new_connections(1, 0), 2u);

  // A flow met first by its backend's answer (mid-stream) is timed as a datagram flow from its first
  // datagram on, though that datagram hits the cache.
  ConcuryLearning met_by_answer = make_learning();
  met_by_answer.learn_all(std::vector{report(1, 3, 1, Met::answer)});
  met_by_answer.learn_all(std::vector{report(1, 3, 5, Met::datagram), report(1, 3, 20, Met::datagram)});
  EXPECT_EQ(met_by_answer.expire(20 + kDatagram - 1, 1000), 0u);
  EXPECT_EQ(met_by_answer.expire(20 + kDatagram, 1000), 1u);
}

// Many more flows than the cache has slots, each sending now and then, expiry at every step: a flow's
// datagrams are counted whether they hit its slot, miss it, or were marked in a slot another flow took
// since. Every flow is known until the datagram timeout after its last datagram, and forgotten within
// one more timeout.
TEST(ConcuryLearning, EveryDatagramFlowLivesFromItsLastDatagramWhateverTheCacheHeld) {
#ifdef FLOWTRACK_SANITIZED
  constexpr std::uint64_t kFlows = 50'000;
#else
  constexpr std::uint64_t kFlows = 200'000;
#endif
  constexpr Nanos kSteps = 6 * kDatagram;
  ConcuryLearning learning = make_learning(Nanos{1} << 50);
  std::mt19937_64 random(20261127);
  std::vector<Nanos> last(kFlows + 1, kNotSeen);
  for (Nanos t = 0; t < kSteps; ++t) {
    std::vector<ConcuryLearning::Report> reports;
    // Flows 1..kFlows send in the first half, a few each step; a flow's first datagram opens it.
    for (int n = 0; t < kSteps / 2 && n < static_cast<int>(kFlows / 40); ++n) {
      const std::uint64_t k = 1 + random() % kFlows;
      reports.push_back(report(0, k, t, Met::datagram));
      last[k] = t;
    }
    learning.learn_all(reports);
    learning.expire(t, ~std::size_t{0});
    if (t % 8 != 0) continue;
    for (std::uint64_t k = 1; k <= kFlows; ++k) {
      if (last[k] == kNotSeen) continue;
      const bool known = learning.control().dip_of(0, k).has_value();
      const bool must_be_known = t < last[k] + kDatagram, must_be_gone = t >= last[k] + 2 * kDatagram;
      ASSERT_TRUE(known ? !must_be_gone : !must_be_known) << "flow " << k << " at " << t << ", last datagram at " << last[k];
    }
  }
  EXPECT_EQ(learning.control().connections(0), 0u);
  EXPECT_EQ(learning.forgotten(), learning.learnt());
}

// Connections that open and close while the long timeout is days leave stale entries on the long
// queue; they are dropped as they pile up, so the queues follow the connections known, not the
// connections ever closed.
TEST(ConcuryLearning, TheQueuedEndsFollowTheConnectionsKnownNotThoseEverClosed) {
  ConcuryLearning learning = make_learning(Nanos{1} << 50);
  constexpr std::uint64_t kConnections = 40'000;
  std::size_t most_queued = 0;
  for (std::uint64_t k = 1; k <= kConnections; ++k) {
    const Nanos at = static_cast<Nanos>(k);
    learning.learn_all(std::vector{report(0, k, at), report(0, k, at, Met::answer), report(0, k, at, Met::client_fin),
                                   report(0, k, at, Met::backend_fin)});
    learning.expire(at, 1000);
    most_queued = std::max(most_queued, learning.queued_ends());
  }
  EXPECT_EQ(learning.control().connections(0), static_cast<std::size_t>(kClosing));  // those closed within the timeout
  EXPECT_EQ(learning.forgotten(), kConnections - kClosing);
  EXPECT_LT(most_queued, 10'000u);
}

}  // namespace
}  // namespace flowtrack
