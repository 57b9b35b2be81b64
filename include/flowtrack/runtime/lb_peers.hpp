// A live stateful LB instance that shares its connections off today's choice with its peers
// (`[dataplane.peers]`, nf/dataplane_config.hpp): the link of nf/lb_peer_link.hpp given a kernel UDP
// socket to each peer (the NAT pair's SyncSocket, connected, all on the local address) and a thread of
// its own beside the workers, never a worker and never a DPDK port.
//
// Each worker's balancer tells its exception events into a ring of its own (a few stores on the
// worker; a full ring loses the event and counts it); the link's thread drains the rings, queues the
// events for every peer, sends them batched (a record waits at most 50 ms), resends what goes
// unacknowledged, and applies what the peers send to one table of their exceptions, which every
// worker reads when a packet finds no state. A peer that asks for everything (it started, or
// restarted), or a lost event, makes the thread send the whole set: each worker lists its exceptions
// between two bursts (a WorkerTask in its mailbox). The records are states, so the events that follow
// in the rings may repeat what the list holds.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/lb_peer_link.hpp"
#include "flowtrack/runtime/engine.hpp"
#include "flowtrack/runtime/live_functions.hpp"
#include "flowtrack/runtime/nat_pair.hpp"
#include "flowtrack/sync/spsc_ring.hpp"

namespace flowtrack {

class LbPeerSync {
 public:
  // Room for this many events per worker between two drains (every few ms): a pool change that marks
  // more at once costs a resynchronisation, never a peer that quietly differs.
  static constexpr std::size_t kEventRing = std::size_t{1} << 16;

  // Opens a socket to every peer. Throws std::runtime_error naming the address that cannot be bound.
  LbPeerSync(const LbPeersConfig& config, const SyncKey& key, unsigned workers);

  // On worker w's thread, before it serves: its exceptions go to the link, the peers' reach it.
  void attach(unsigned w, LiveLb& lb);
  // On worker w's thread once it has stopped serving, before its balancer goes: waits for run() to have
  // ended (within a few ms of the engine's stop).
  void detach(unsigned w);
  // The link, on a thread of its own, until `stop` or the engine stops.
  void run(Engine& engine, const std::atomic<bool>& stop);
  // What the link did, for the run's end: records sent and received, refusals, exceptions held.
  std::string summary() const;

 private:
  class RingSink final : public LbExceptionSink {
   public:
    explicit RingSink(std::size_t capacity) : ring_(capacity) {}
    void emit(const LbExceptionEvent& event) override {
      if (ring_.push(std::span(&event, 1)) != 1) lost_.fetch_add(1, std::memory_order_relaxed);
    }
    SpscRingOf<LbExceptionEvent>& ring() { return ring_; }
    std::uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

   private:
    SpscRingOf<LbExceptionEvent> ring_;
    std::atomic<std::uint64_t> lost_{0};
  };

  void drain_events();
  std::uint64_t lost_events() const;
  // Every worker's exceptions, each listed between two of its bursts; nothing when the run stopped first.
  std::optional<std::vector<LbExceptionEvent>> list_exceptions(Engine& engine, const std::atomic<bool>& stop);

  const LbPeersConfig& config_;
  LbPeerExceptions installed_;
  LbPeerLink link_;
  std::vector<std::unique_ptr<SyncSocket>> sockets_;  // by peer
  std::vector<std::unique_ptr<RingSink>> sinks_;      // by worker
  std::vector<LiveLb*> lbs_;                          // by worker, set by attach
  std::vector<std::vector<LbExceptionEvent>> listed_;  // by worker, written by its WorkerTask
  std::uint64_t events_queued_ = 0, lost_seen_ = 0;
  std::atomic<bool> finished_{false};  // run() has ended: no balancer is read any more
};

}  // namespace flowtrack
