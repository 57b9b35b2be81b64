// The exception events of a stateful LB that shares them, made and thrown away (`bench nf
// --lb-sync-events`): what telling peers costs the balancer's worker, without the link. Each event is
// copied into a small ring of the latest ones, the stores a push into a link's ring would make; the
// balancer counts them (StatefulLbStats::exception_events).
#pragma once

#include <array>
#include <cstdint>

#include "flowtrack/nf/lb_exceptions.hpp"

namespace flowtrack::cli {

class DiscardingLbExceptions final : public LbExceptionSink {
 public:
  void emit(const LbExceptionEvent& event) override { latest_[emitted_++ % latest_.size()] = event; }

 private:
  std::array<LbExceptionEvent, 64> latest_{};
  std::uint64_t emitted_ = 0;
};

}  // namespace flowtrack::cli
