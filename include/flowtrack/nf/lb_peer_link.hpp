// The exceptions of balancer instances behind ECMP (lb_exceptions.hpp) shared between them over the
// NAT pair's sync link: the same datagrams (nat_sync_message.hpp: batched in one frame, numbered,
// HMAC-SHA256-sealed with a key every instance holds, acknowledged, resent, refused and counted when
// malformed, forged or replayed) and the same two state machines (nat_sync_peer.hpp), one of each per
// peer: every instance is the sending end of its own exceptions to each peer (NatSyncActive) and the
// receiving end of each peer's (NatSyncStandby, applying them to an LbPeerReplica). No socket, no
// thread, no clock of its own, as the pair's ends: tested by handing it datagrams.
//
// A peer that starts, or restarts, asks for everything (a hello): take_resync_requests() names it, and
// its owner sends it the whole set of this instance's exceptions (resynchronise()), then the changes
// that follow. Records are states, not steps (a tuple is or is not an exception, with a backend), so a
// change that a whole set already holds may follow it again harmlessly. A peer unheard for dead_after
// whose backlog outgrows its bound is given up on: nothing is queued for it until its hello.
//
// What a peer told outlives it: the instance that died or was withdrawn is the one whose connections
// now arrive here. Its entries go when it tells so (a connection ended or back on today's choice), or
// when it starts again (its resync_begin forgets them), or never, within LbPeerExceptions' bound.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "flowtrack/nf/lb_exceptions.hpp"
#include "flowtrack/nf/nat_sync_peer.hpp"

namespace flowtrack {

// An exception event as a record of the link.
SyncRecord sync_record_of(const LbExceptionEvent& event);

// What one peer's stream does to the exceptions this instance holds.
class LbPeerReplica final : public SyncReplica {
 public:
  LbPeerReplica(LbPeerExceptions& exceptions, std::uint8_t peer) : exceptions_(exceptions), peer_(peer) {}
  // false for a record no balancer sends (a NAT's), and for an exception past the bound (counted there).
  bool apply(const SyncRecord& record, Nanos now) override;

 private:
  LbPeerExceptions& exceptions_;
  std::uint8_t peer_;
};

class LbPeerLink {
 public:
  // `epoch`: this process's incarnation (its start time in ns). `installed`: where the peers'
  // exceptions go. Throws std::invalid_argument for no peer or more than kMaxLbPeers.
  LbPeerLink(const SyncKey& key, std::uint64_t epoch, std::size_t peers, LbPeerExceptions& installed, SyncTimers timers = {},
             std::size_t max_backlog = NatSyncActive::kDefaultMaxBacklog);

  // One of this instance's exceptions changed: queued for every peer streamed to.
  void queue(const LbExceptionEvent& event);
  // The peers to send the whole set to now (they asked, or lost the stream), each then streamed to;
  // a peer unheard within dead_after is not streamed to until it asks.
  std::vector<std::size_t> take_resync_requests(Nanos now);
  // Queues this instance's whole set for `peer` (everything queued for it before is dropped).
  void resynchronise(std::size_t peer, std::span<const LbExceptionEvent> exceptions);

  // A datagram from `peer` at `now`; appends the answer (an ack, a hello) to `out`, which goes to `peer`.
  void receive(std::size_t peer, std::span<const std::uint8_t> datagram, Nanos now, Datagrams& out);
  // Appends what goes to `peer` at `now`: data messages, retransmissions, heartbeats, hellos.
  void poll(std::size_t peer, Nanos now, Datagrams& out);

  std::size_t peers() const { return peers_.size(); }
  // The peers streamed to now: those that must get the whole set again when an event was lost.
  std::vector<std::size_t> streamed_to() const;
  // Whether this instance holds `peer`'s whole set and its stream since.
  bool holds_all_of(std::size_t peer) const { return peers_[peer]->receiver.synchronised(); }
  // Both ends' counters, summed over the peers.
  SyncCounters counters() const;

 private:
  struct Peer {
    Peer(const SyncKey& key, std::uint64_t epoch, LbPeerExceptions& installed, std::uint8_t index, SyncTimers timers, std::size_t max_backlog)
        : replica(installed, index), sender(key, epoch, timers, max_backlog), receiver(key, epoch, replica, timers) {}
    LbPeerReplica replica;
    NatSyncActive sender;      // this instance's exceptions, to the peer
    NatSyncStandby receiver;   // the peer's, to `replica`
    bool streamed_to = false;  // from its whole set sent until it is given up on
  };
  SyncTimers timers_;
  std::vector<std::unique_ptr<Peer>> peers_;
};

}  // namespace flowtrack
