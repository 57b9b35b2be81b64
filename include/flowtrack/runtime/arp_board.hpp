// The ARP messages the workers of a live data plane received, for each other to learn from: ARP frames
// land on whichever worker's queue the NIC (or the kernel's fanout) picks, but every worker sends, so
// every worker's layer 2 (layer2.hpp) must learn every neighbour. A worker posts each ARP message it
// took in; the others replay what they have not seen through their own Layer2::on_arp (ignoring the
// reply: the receiver answered already). Posting and reading take a lock: ARP is rare; the per-poll
// check is one relaxed load of the message count.
//
// The board keeps the latest kKept messages: a worker that fell further behind misses the older ones
// and learns those neighbours by asking again (its own requests), as after a lost frame.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "flowtrack/runtime/layer2.hpp"

namespace flowtrack {

class ArpBoard {
 public:
  static constexpr std::size_t kKept = 256;

  struct Posted {
    std::uint16_t port;
    ArpMessage message;
    Nanos time;
  };

  void post(const Posted& p) {
    const std::lock_guard lock(mutex_);
    const std::uint64_t n = count_.load(std::memory_order_relaxed);
    kept_[n % kKept] = p;
    count_.store(n + 1, std::memory_order_release);
  }

  bool has_news(std::uint64_t seen) const { return count_.load(std::memory_order_relaxed) != seen; }

  // Calls each(posted) for the messages after the first `seen` (the latest kKept of them), oldest
  // first, then advances `seen` to the count.
  template <class Each>
  void read_since(std::uint64_t& seen, Each&& each) const {
    const std::lock_guard lock(mutex_);
    const std::uint64_t n = count_.load(std::memory_order_relaxed);
    for (std::uint64_t i = n - std::min<std::uint64_t>(n - seen, kKept); i < n; ++i) each(kept_[i % kKept]);
    seen = n;
  }

 private:
  mutable std::mutex mutex_;
  std::atomic<std::uint64_t> count_{0};
  std::array<Posted, kKept> kept_{};
};

}  // namespace flowtrack
