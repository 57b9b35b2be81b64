#include "flowtrack/sched/rate_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace flowtrack {

std::vector<RateParams> paper_rate_set(int set) {
  // Table 4 of the paper: a, b, C, m (s), sigma for S1..S4.
  if (set == 1) {
    return {{1.0, 0.03, 0.3, 40, 0.1}, {1.8, -0.25, 0.1, 25, 0.05}, {0.5, 0.01, 0.07, 60, 0.25}, {0.3, 0.005, 0.09, 600, 0.3}};
  }
  if (set == 2) {
    return {{1.5, 0.002, 0.3, 100, 0.3}, {1.3, -0.2, 0.15, 25, 0.05}, {1.0, 0.004, 0.25, 30, 0.25}, {0.7, 0.01, 0.18, 200, 0.3}};
  }
  throw std::invalid_argument("the paper defines rate sets 1 and 2 only");
}

std::vector<RateParams> equal_split(double total_mpps, unsigned services) {
  if (!(total_mpps >= 0) || services == 0) throw std::invalid_argument("need a non-negative rate and at least one service");
  return std::vector<RateParams>(services, RateParams{total_mpps / services, 0, 0, 1, 0});
}

double expected_rate_mpps(const RateParams& rate, double t_s) {
  const double seasonal = std::sin(2 * std::numbers::pi * std::fmod(t_s, rate.period_s) / rate.period_s);
  return std::max(0.0, rate.a + rate.b * t_s + rate.c * seasonal);
}

ArrivalClock::ArrivalClock(const RateParams& rate, Picos epoch, Picos horizon, std::uint64_t seed)
    : rate_(rate), epoch_(epoch), horizon_(horizon), rng_(seed) {
  if (epoch <= 0) throw std::invalid_argument("the rate epoch must be positive");
  if (!(rate.period_s > 0)) throw std::invalid_argument("the seasonal period must be positive");
  start_epoch(0);
}

void ArrivalClock::start_epoch(Picos start) {
  now_ = start;
  epoch_end_ = start + epoch_;
  double noise = 0;
  if (rate_.sigma > 0) {
    // Box-Muller: one standard normal from two uniforms (1 - u keeps the logarithm finite). The draws are
    // sequenced here: two draws in one expression are taken in an order each compiler picks.
    const double radius_draw = rng_.unit();
    const double angle_draw = rng_.unit();
    noise = rate_.sigma * std::sqrt(-2 * std::log(1 - radius_draw)) * std::cos(2 * std::numbers::pi * angle_draw);
  }
  const double mpps = std::max(0.0, expected_rate_mpps(rate_, picos_to_seconds(start)) + noise);
  mean_gap_ps_ = mpps > 0 ? 1e6 / mpps : 0;  // 1e12 ps per s / (mpps * 1e6 packets per s)
}

}  // namespace flowtrack
