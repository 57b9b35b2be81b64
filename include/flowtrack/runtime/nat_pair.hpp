// A live NAT of an active/standby pair (`[dataplane.pair]`, nf/dataplane_config.hpp): the sync link of
// nf/nat_sync_peer.hpp given a kernel UDP socket on a management interface and a control-plane thread,
// never a worker and never a DPDK port.
//
// Every NAT of a pair starts as a standby (stand_by): its ports are up but nothing polls them, so it
// neither answers ARP nor forwards. It asks its peer for everything (hello) and applies what the active
// sends to its copy (NatReplica), acknowledging as it goes. It takes over:
//  - when an active it has heard goes silent for dead_interval (heartbeats come every quarter of it);
//  - on `flowtrack ctl takeover`, unless an active is alive and the copy is not synchronised (a
//    takeover before the resynchronisation has ended would break the connections the copy lacks);
//  - at the start, with role "active", when no active is heard within dead_interval (the pair's first
//    start). A NAT whose role is "active" that finds an active peer stands by: a restarted active never
//    takes its place back by itself (no failback), and an operator's failback waits for the resync.
// Taking over, it builds its workers' NATs from the copy (RestoreMode::what_fits), starts them on its
// ports, sends gratuitous ARP for every address it answers for (DpdkPorts::announce) and becomes the
// active, with an epoch (its takeover time) later than any its peer has seen of it.
//
// The active's link (ActiveSyncLink) runs on a thread beside the workers: it drains each worker's event
// ring (nf/nat_event_ring.hpp), queues the records, sends them batched (a record waits at most 50 ms),
// resends what goes unacknowledged and heartbeats when idle. With no standby (none has asked yet, or
// one stayed away until its backlog was dropped) the events are dropped: its hello brings everything. A standby's hello (a new standby
// incarnation) or a lost event makes it send the whole state: each worker takes its snapshot between
// two bursts (a WorkerTask in its mailbox) with the count of events it had pushed, so the events the
// snapshot already holds are dropped from the ring and the later ones follow the resync_end marker.
// An active that hears an authenticated heartbeat of an active incarnation later than its own (the
// peer took over while this one was alive, by `ctl takeover`) steps down: it stops serving and the run
// ends, saying why; started again, it stands by. So two actives never stay two.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/nat_snapshot.hpp"
#include "flowtrack/nf/nat_sync_peer.hpp"
#include "flowtrack/runtime/control_socket.hpp"
#include "flowtrack/runtime/engine.hpp"
#include "flowtrack/runtime/live_counters.hpp"
#include "flowtrack/runtime/live_functions.hpp"

namespace flowtrack {

// The link's timers from the configuration: heartbeats four times per dead interval.
SyncTimers pair_timers(const PairConfig& config);

// The sync link's socket: kernel UDP, bound to the local address, sending to the peer's.
class SyncSocket {
 public:
  // Throws std::runtime_error naming the address when it cannot be bound. `connected`: the socket
  // takes only the peer's datagrams (connect(2)), so that one per peer may share the local address
  // (an LB instance's peers, runtime/lb_peers.hpp): the kernel gives each datagram to the socket
  // connected to its sender.
  SyncSocket(const DataplaneListen& local, const DataplaneListen& peer, bool connected = false);
  ~SyncSocket();
  SyncSocket(const SyncSocket&) = delete;
  SyncSocket& operator=(const SyncSocket&) = delete;

  // To the peer. A datagram the kernel does not take (no route yet, a full buffer) is lost as on a
  // wire: the link sends again what matters.
  void send(const Datagrams& datagrams);
  // Waits at most `wait` for a datagram, then hands every one waiting to `take`, whoever sent it (the
  // key decides what is the peer's).
  void receive(Nanos wait, const std::function<void(std::span<const std::uint8_t>)>& take);

 private:
  int fd_ = -1;
  sockaddr_in peer_{};
};

// The pair's figures, left by the link's thread for the control plane (the counters' readers).
class PairBoard {
 public:
  void publish(const LiveCounters::PairFigures& figures) {
    const std::lock_guard lock(mutex_);
    figures_ = figures;
  }
  LiveCounters::PairFigures read() const {
    const std::lock_guard lock(mutex_);
    return figures_;
  }

 private:
  mutable std::mutex mutex_;
  LiveCounters::PairFigures figures_;
};

// What a standby takes over with.
struct Takeover {
  std::vector<NatSnapshot> workers;  // by worker: what its NAT restores
  std::size_t sessions = 0;          // in the copy
  std::string reason;
  Nanos decided = 0;                  // when it decided to take over (DpdkPorts::now)
  LiveCounters::PairFigures figures;  // the standby's, which the active's go on from
};

// The standby, on the calling thread, until it takes over (nullopt: `stop` came first). It serves the
// control socket meanwhile (counters, takeover), publishing its counters to `published` as well.
std::optional<Takeover> stand_by(const PairConfig& config, const SyncKey& key, unsigned workers, Nanos quarantine, SyncSocket& socket,
                                 ControlSocket* control, CounterBoard& published, PairBoard& board, const std::atomic<bool>& stop);

class ActiveSyncLink {
 public:
  // Room for this many events per worker between two drains (every few ms): a burst of new sessions
  // beyond it costs a resynchronisation, never a silent difference.
  static constexpr std::size_t kEventRing = std::size_t{1} << 16;

  // `base`: the standby's figures, which these go on from.
  ActiveSyncLink(const PairConfig& config, const SyncKey& key, SyncSocket& socket, unsigned workers, PairBoard& board,
                 LiveCounters::PairFigures base);

  // On worker w's thread, before it serves: its sessions' events go to the link.
  void attach(unsigned w, LivePairedNat& nat);
  // On worker w's thread once it has stopped serving, before its NAT goes: waits for run() to have
  // ended (it ends within a few ms of the engine's stop), which reads the NATs' lost-event counts.
  void detach(unsigned w);
  // The link, on a thread of its own, until `stop` or the engine stops. A peer that became active later
  // than this one stops the engine (stepped_down() then says why).
  void run(Engine& engine, const std::atomic<bool>& stop);
  const std::string& stepped_down() const { return stepped_down_; }

 private:
  struct Taken {
    NatSnapshot snapshot;
    std::uint64_t pushed = 0;  // events the worker had put in its ring when it took the snapshot
  };
  void drain_events();  // queued while streaming_, else dropped
  std::uint64_t lost_events() const;
  // Queues the whole state; false when the run stopped before every worker gave its snapshot.
  bool resynchronise(Engine& engine, const std::atomic<bool>& stop);
  void publish();

  const PairConfig& config_;
  const SyncKey& key_;
  SyncSocket& socket_;
  std::uint64_t epoch_;
  NatSyncActive active_;
  PairBoard& board_;
  LiveCounters::PairFigures base_;
  std::vector<std::unique_ptr<SpscRingOf<NatEvent>>> rings_;  // by worker (sync on)
  std::vector<LivePairedNat*> nats_;                          // by worker, set by attach (sync on)
  std::vector<std::uint64_t> consumed_;                       // events taken from each ring so far
  std::vector<Taken> taken_;  // each worker's last snapshot, written by its WorkerTask
  std::uint64_t events_sent_ = 0, lost_seen_ = 0;
  // Whether the events go on the link: from the whole state sent to a standby until a resync finds no
  // standby heard within the dead interval (the backlog for one gone was dropped); its hello starts again.
  bool streaming_ = false;
  std::string stepped_down_;
  std::atomic<bool> finished_{false};  // run() has ended: no NAT is read any more
};

}  // namespace flowtrack
