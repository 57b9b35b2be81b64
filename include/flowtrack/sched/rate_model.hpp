// Offered load per service: the paper's trend + seasonal + noise model, and the Poisson arrivals it
// drives.
//
//   x(t) = a + b t + C sin(2 pi t / m) + n,   in Mpps, t and m in seconds, clipped at 0,
//
// where n ~ N(0, sigma) is drawn afresh every rate epoch (1 ms by default) and held through it. Within an
// epoch arrivals are Poisson at the epoch's rate; at an epoch boundary the next gap is drawn anew at the
// new rate (exact, since the exponential gap is memoryless). The paper gives neither the shape of the
// seasonal term, nor the noise law, nor the arrival process: these are the choices.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "flowtrack/sched/picos.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack {

struct RateParams {
  double a = 0;          // Mpps
  double b = 0;          // Mpps per second
  double c = 0;          // Mpps, amplitude of the seasonal term
  double period_s = 1;   // m
  double sigma = 0;      // Mpps, standard deviation of the noise
};

// The paper's Table 4: set 1 (under the 16-core capacity) and set 2 (over it), services S1..S4.
std::vector<RateParams> paper_rate_set(int set);  // throws std::invalid_argument unless set is 1 or 2
// A constant total rate split equally among `services` (the throughput experiment).
std::vector<RateParams> equal_split(double total_mpps, unsigned services);

// The noise-free rate at time t.
double expected_rate_mpps(const RateParams& rate, double t_s);

class ArrivalClock {
 public:
  static constexpr Picos kNever = INT64_MAX;

  // Arrivals in [0, horizon).
  ArrivalClock(const RateParams& rate, Picos epoch, Picos horizon, std::uint64_t seed);

  // The time of the next arrival, or kNever once the horizon is passed. Inline: it runs once per
  // simulated packet, and only an epoch change (one in hundreds of arrivals) leaves this path.
  Picos next() {
    for (;;) {
      if (now_ >= horizon_) return kNever;
      if (mean_gap_ps_ > 0) {
        // Exponential gap by inversion. The logarithm is taken in single precision (three times cheaper
        // than the double one, and this is the simulator's costliest arithmetic per packet): 1 - u stays
        // above 2^-53, far inside float's range, so the tail is kept; only the gap's low digits round.
        const float survivor = static_cast<float>(1.0 - rng_.unit());
        const Picos t = now_ + static_cast<Picos>(-mean_gap_ps_ * static_cast<double>(std::log(survivor)));
        if (t < epoch_end_) {
          now_ = t;
          return t < horizon_ ? t : kNever;
        }
      }
      start_epoch(epoch_end_);
    }
  }

 private:
  void start_epoch(Picos start);

  RateParams rate_;
  Picos epoch_;
  Picos horizon_;
  Random rng_;
  Picos now_ = 0;
  Picos epoch_end_ = 0;
  double mean_gap_ps_ = 0;  // 0 while the epoch's rate is 0
};

}  // namespace flowtrack
