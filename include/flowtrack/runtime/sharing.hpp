// How the engine's workers get the function they run, chosen where the function is made:
//  - OnePerWorker: make(worker, workers, start) builds each worker its own instance, on the worker's
//    thread (its memory near its core), nothing shared between them ([lb-flowtables]'s per-core
//    duplication; a NAT instance owns its slice of the port range); the factory may still give them something to share
//    (bench scale's meters over one shared table);
//  - OneUnderLock: one instance for all workers, every burst through it under one spinlock
//    ([lb-flowtables]'s global lock, [mt-nat]'s global spinlock NAT; with bursts of one, a lock per packet).
//    Workers replay their queues concurrently, each at its own pace through trace time; the instance
//    is shown a clock that never goes back (the latest time any worker has reached), as its aging
//    requires, and each pool change once (the first worker to reach it applies it).
//
// Both: instance(w, start) on worker w's thread gives what it runs (a NetworkFunction);
// each_result(visit) after the run calls visit(worker, const Nf&) for every instance whose figures are
// that worker's (one per worker; the one shared instance as worker 0's).
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/util/spinlock.hpp"

namespace flowtrack {

// make(worker, workers, start) -> std::unique_ptr<Nf>.
template <class Make>
using MadeFunction = typename std::invoke_result_t<Make&, unsigned, unsigned, Nanos>::element_type;

template <class Make>
class OnePerWorker {
 public:
  using Nf = MadeFunction<Make>;

  OnePerWorker(Make make, unsigned workers) : make_(std::move(make)), instances_(workers) {}

  Nf& instance(unsigned worker, Nanos start) {
    instances_[worker] = make_(worker, static_cast<unsigned>(instances_.size()), start);
    return *instances_[worker];
  }
  template <class Visit>
  void each_result(Visit&& visit) const {
    for (unsigned w = 0; w < instances_.size(); ++w) {
      if (instances_[w]) visit(w, std::as_const(*instances_[w]));
    }
  }

 private:
  Make make_;
  std::vector<std::unique_ptr<Nf>> instances_;
};

// A worker's view of one instance shared under a lock.
template <NetworkFunction Nf>
class LockedNf {
 public:
  struct Shared {
    std::unique_ptr<Nf> nf;
    alignas(64) Spinlock lock;
    Nanos clock = 0;             // the latest time shown to nf; guarded by lock
    std::uint64_t changes = 0;   // pool changes applied to nf; guarded by lock
  };

  explicit LockedNf(Shared& shared) : shared_(shared) {}

  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    std::lock_guard guard(shared_.lock);
    for (NfPacket& packet : burst) packet.time = advance(packet.time);
    shared_.nf->process_burst(burst, out);
  }
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) {
    std::lock_guard guard(shared_.lock);
    return shared_.nf->expire(advance(now), budget);
  }
  // Every worker is posted the same changes in the same order: the n-th change this view sees is applied
  // only if no other worker applied an n-th one before.
  void apply(const PoolChange& change)
    requires TakesPoolChanges<Nf>
  {
    std::lock_guard guard(shared_.lock);
    if (++seen_ <= shared_.changes) return;
    shared_.changes = seen_;
    shared_.nf->apply(change);
  }
  // The instance's counters belong to no one worker: they are reported once, as worker 0's.
  NfCounters counters() const { return {}; }

 private:
  Nanos advance(Nanos now) { return shared_.clock = std::max(shared_.clock, now); }

  Shared& shared_;
  std::uint64_t seen_ = 0;
};

template <class Make>
class OneUnderLock {
 public:
  using Nf = MadeFunction<Make>;

  // The one instance's clock starts at `start` (the earliest packet any worker will show it).
  OneUnderLock(Make make, unsigned workers, Nanos start) {
    shared_.clock = start;
    shared_.nf = make(0u, 1u, start);
    for (unsigned w = 0; w < workers; ++w) views_.push_back(std::make_unique<LockedNf<Nf>>(shared_));
  }

  LockedNf<Nf>& instance(unsigned worker, Nanos) { return *views_[worker]; }
  template <class Visit>
  void each_result(Visit&& visit) const {
    visit(0u, std::as_const(*shared_.nf));
  }

 private:
  typename LockedNf<Nf>::Shared shared_;
  std::vector<std::unique_ptr<LockedNf<Nf>>> views_;
};

}  // namespace flowtrack
