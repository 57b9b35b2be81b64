// The timer wheel on its own: accuracy across its levels, beyond its reach, and under lazy re-arm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "flowtrack/aging/timer_wheel.hpp"

namespace flowtrack {
namespace {

TEST(TimerWheel, RejectsAZeroTickAndImpossibleLevelCounts) {
  EXPECT_THROW(TimerWheel(16, {.tick = 0}), std::invalid_argument);
  EXPECT_THROW(TimerWheel(16, {.tick = kNanosPerMilli, .levels = 0}), std::invalid_argument);
  EXPECT_THROW(TimerWheel(16, {.tick = kNanosPerMilli, .levels = TimerWheel::kMaxLevels + 1}), std::invalid_argument);
  EXPECT_NO_THROW(TimerWheel(16, {.tick = kNanosPerMilli, .levels = TimerWheel::kMaxLevels}));
}

// One scripted run: each flow is armed, then touched or given a new timeout a few times (always before
// its deadline), then left alone. advance() is called at the tick before and the tick of every flow's
// final deadline tick (ceil(deadline / tick)), and the run checks that each call reports exactly the
// flows whose final deadline tick it reaches: none early, none late.
class WheelScript {
 public:
  WheelScript(TimerWheelConfig config, std::uint32_t seed) : config_(config), rng_(seed) {}

  // Adds a flow armed at `start` with `timeout`, refreshed `refreshes` times.
  void add_flow(Nanos start, Nanos timeout, int refreshes) {
    const auto id = static_cast<FlowId>(final_deadline_.size());
    ops_.push_back({start, id, Op::arm, timeout});
    Nanos at = start;
    for (int i = 0; i < refreshes; ++i) {
      at += std::uniform_int_distribution<Nanos>(0, timeout - 1)(rng_);  // strictly before the deadline
      if (rng_() % 2 == 0) {
        ops_.push_back({at, id, Op::touch, timeout});
      } else {
        timeout = std::max<Nanos>(1, static_cast<Nanos>(static_cast<double>(timeout) *
                                                         std::uniform_real_distribution<>(0.01, 4.0)(rng_)));
        ops_.push_back({at, id, Op::set_timeout, timeout});
      }
    }
    final_deadline_.push_back(at + timeout);
  }

  void run() {
    TimerWheel wheel(final_deadline_.size(), config_);
    // Every flow's final deadline tick, and the tick before it, is an advance() call.
    std::multimap<std::uint64_t, FlowId> due_at_tick;
    std::vector<std::uint64_t> advance_ticks;
    for (FlowId id = 0; id < final_deadline_.size(); ++id) {
      const std::uint64_t tick = (final_deadline_[id] + config_.tick - 1) / config_.tick;
      due_at_tick.emplace(tick, id);
      advance_ticks.push_back(tick - 1);
      advance_ticks.push_back(tick);
    }
    std::sort(advance_ticks.begin(), advance_ticks.end());
    advance_ticks.erase(std::unique(advance_ticks.begin(), advance_ticks.end()), advance_ticks.end());
    std::sort(ops_.begin(), ops_.end(), [](const Op& a, const Op& b) { return a.at < b.at; });

    auto op = ops_.begin();
    std::size_t expired = 0;
    for (const std::uint64_t tick : advance_ticks) {
      const Nanos now = tick * config_.tick;
      for (; op != ops_.end() && op->at <= now; ++op) apply(wheel, *op);
      std::vector<FlowId> reported;
      wheel.advance(now, ~std::size_t{0}, [&](FlowId id) {
        reported.push_back(id);
        EXPECT_LE(final_deadline_[id], now) << "flow " << id << " early";
        EXPECT_LT(now - final_deadline_[id], config_.tick) << "flow " << id << " more than a tick late";
      });
      std::vector<FlowId> expected;
      for (auto [it, end] = due_at_tick.equal_range(tick); it != end; ++it) expected.push_back(it->second);
      std::sort(reported.begin(), reported.end());
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(reported, expected) << "at tick " << tick;
      expired += reported.size();
    }
    EXPECT_EQ(op, ops_.end());
    EXPECT_EQ(expired, final_deadline_.size());
    EXPECT_EQ(wheel.size(), 0u);
  }

 private:
  struct Op {
    enum Kind { arm, touch, set_timeout };
    Nanos at;
    FlowId id;
    Kind kind;
    Nanos timeout;
  };

  static void apply(TimerWheel& wheel, const Op& op) {
    switch (op.kind) {
      case Op::arm: wheel.arm(op.id, op.at, op.timeout); break;
      case Op::touch: wheel.touch(op.id, op.at); break;
      case Op::set_timeout: wheel.set_timeout(op.id, op.at, op.timeout); break;
    }
  }

  TimerWheelConfig config_;
  std::mt19937_64 rng_;
  std::vector<Op> ops_;
  std::vector<Nanos> final_deadline_;
};

// Timeouts from one tick to hours, log-uniform, so that every level gets its share.
Nanos log_uniform(std::mt19937_64& rng, Nanos low, Nanos high) {
  const double exponent = std::uniform_real_distribution<>(std::log(double(low)), std::log(double(high)))(rng);
  return std::max(low, static_cast<Nanos>(std::exp(exponent)));
}

TEST(TimerWheel, TimeoutsFromOneTickToHoursFireWithinOneTickOfTheirDeadline) {
  constexpr Nanos kTick = 100 * kNanosPerMicro;
  constexpr Nanos kHours = 3 * 3600 * kNanosPerSecond;
  for (const std::uint32_t seed : {1u, 2u, 3u}) {
    WheelScript script({.tick = kTick, .levels = 4, .start = 0}, seed);
    std::mt19937_64 rng(seed);
    // The level boundaries themselves, exactly and one tick either side.
    for (const Nanos ticks : {1ull, 2ull, 255ull, 256ull, 257ull, 65535ull, 65536ull, 65537ull, 16777215ull,
                              16777216ull, 16777217ull}) {
      script.add_flow(0, ticks * kTick, 0);
      script.add_flow(kTick / 3, ticks * kTick, 0);
    }
    for (int i = 0; i < 2000; ++i) {
      const Nanos start = std::uniform_int_distribution<Nanos>(0, 100'000 * kTick)(rng);
      script.add_flow(start, log_uniform(rng, kTick, kHours), static_cast<int>(rng() % 4));
    }
    SCOPED_TRACE(seed);
    script.run();
  }
}

TEST(TimerWheel, TimeoutsBeyondTheWheelsReachParkAndStillFireOnTime) {
  // Two levels of 1 ms reach 65.5 s; these timeouts run to hours.
  constexpr Nanos kTick = kNanosPerMilli;
  WheelScript script({.tick = kTick, .levels = 2, .start = 0}, 7);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    script.add_flow(std::uniform_int_distribution<Nanos>(0, 10'000 * kTick)(rng),
                    log_uniform(rng, 60'000 * kTick, 10'000'000 * kTick), static_cast<int>(rng() % 3));
  }
  script.run();
}

TEST(TimerWheel, AWheelStartedLateInTheClocksLifeKeepsTime) {
  // A TSC clock has run for days before the wheel exists.
  constexpr Nanos kTick = 10 * kNanosPerMicro;
  constexpr Nanos kStart = 5 * 24 * 3600 * kNanosPerSecond + 12345;
  WheelScript script({.tick = kTick, .levels = 3, .start = kStart}, 11);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) {
    script.add_flow(kStart + std::uniform_int_distribution<Nanos>(0, 1000 * kTick)(rng),
                    log_uniform(rng, kTick, 60 * kNanosPerSecond), static_cast<int>(rng() % 4));
  }
  script.run();
}

TEST(TimerWheel, ATouchedFlowIsNotExpiredButReArmedWhenItsOldTimerFires) {
  constexpr Nanos kTick = kNanosPerMilli;
  constexpr Nanos kTimeout = 1000 * kTick;
  TimerWheel wheel(1, {.tick = kTick});
  wheel.arm(0, 0, kTimeout);
  Nanos now = 0;
  std::size_t expired = 0;
  // A packet every 0.9 timeouts for about 100 timeouts, the wheel advanced every tick in between.
  for (int packet = 0; packet < 110; ++packet) {
    for (Nanos end = now + 9 * kTimeout / 10; now < end;) {
      now += kTick;
      expired += wheel.advance(now, ~std::size_t{0}, [](FlowId) {});
    }
    wheel.touch(0, now);
    EXPECT_TRUE(wheel.armed(0));
    EXPECT_EQ(wheel.deadline(0), now + kTimeout);
  }
  EXPECT_EQ(expired, 0u);
  const Nanos deadline = now + kTimeout;
  while (expired == 0) {
    now += kTick;
    expired += wheel.advance(now, ~std::size_t{0}, [](FlowId) {});
  }
  EXPECT_EQ(now, deadline);
  EXPECT_FALSE(wheel.armed(0));
}

TEST(TimerWheel, CancelAndReArmFromInsideTheCallback) {
  constexpr Nanos kTick = kNanosPerMilli;
  TimerWheel wheel(4, {.tick = kTick});
  for (FlowId id = 0; id < 4; ++id) wheel.arm(id, 0, 5 * kTick);
  // Flows 0..3 share one slot. Whichever is reported first cancels the others that are still armed and
  // re-arms itself for 10 more ticks.
  std::vector<FlowId> reported;
  wheel.advance(5 * kTick, ~std::size_t{0}, [&](FlowId id) {
    reported.push_back(id);
    for (FlowId other = 0; other < 4; ++other) {
      if (other != id) wheel.cancel(other);
    }
    if (reported.size() == 1) wheel.arm(id, 5 * kTick, 10 * kTick);
  });
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(wheel.size(), 1u);
  EXPECT_EQ(wheel.advance(14 * kTick, ~std::size_t{0}, [](FlowId) {}), 0u);
  EXPECT_EQ(wheel.advance(15 * kTick, ~std::size_t{0}, [&](FlowId id) { EXPECT_EQ(id, reported[0]); }), 1u);
  EXPECT_EQ(wheel.size(), 0u);
}

}  // namespace
}  // namespace flowtrack
