// A network function live on DPDK ports (`flowtrack run --dpdk`): the engine (runtime/engine.hpp) with
// DpdkPorts as every worker's source and output, and the control plane on a thread of its own beside
// the workers.
//
// Start: the EAL with the operator's arguments; the ports of [dataplane] (dpdk_port_group.hpp); the
// workers, one function instance each, pinned to the CPUs of the EAL's lcores (`-l`: worker w on the
// w-th, wrapping around) and registered with the EAL (dpdk_threads.hpp); frames a worker does not own
// reach their owner over the hand-off rings (packet_owner.hpp).
//
// The control plane (its thread is not pinned: it sleeps in poll() nearly all the time) is the only
// thing that reaches the workers, through their mailboxes (mailbox.hpp):
//  - every 100 ms it asks each worker for a copy of its counters (a worker answers between two bursts,
//    or at its next tick when its ports are quiet), sums them and publishes the sum (CounterBoard) for
//    the threads that serve DPDK telemetry and Prometheus text; every stats interval it hands the sum
//    to the observer (the stats line);
//  - it serves the control socket ([dataplane] control_socket, control_socket.hpp): `counters` answers
//    the latest sum; a pool change (slb, lb, concury) is checked with every change made so far against
//    the configured pool, refused whole if it does not fit, else posted to every worker, and "ok" goes
//    out once every worker has applied it between two of its bursts (a worker that has not within
//    kChangeWait is named in the reply: it applies it when it next polls).
//  - the health checks of the services that have them (health_checker.hpp) run on a thread of their own
//    and post each backend's down and up to every worker's mailbox as they happen; their states join
//    the published counters.
// A [[change]] schedule plays into the mailboxes as its times come (scheduled_source.hpp), counting
// from each worker's first packet; it and a control socket do not mix (refused at start).
//
// A NAT pair ([dataplane.pair], runtime/nat_pair.hpp): with its ports up, the run stands by on the
// calling thread (serving the control socket) until it takes over; its workers then start from the
// standby's copy, worker 0 sends gratuitous ARP, and the active's sync link runs on a thread beside the
// workers. No state file and no port blocks with a pair (refused at the start).
//
// State: with a state file (LiveServiceOptions::state; nat and lb), the workers start from the state it
// holds, read before the EAL starts (a missing or refused file stops the start there unless the
// operator asked to start empty), and each leaves its snapshot when it stops; the file is written once
// all have. `ctl save-state` writes it while the run goes on: each worker leaves a snapshot between two
// of its bursts, and the control plane writes the file once all have (none answering within
// kChangeWait: nothing written, an error reply). The NAT's port-block log is written by the control plane at every publish and once more at
// the stop.
//
// Routing ([dataplane.announce], route_announcer.hpp): the VIPs are withdrawn before the EAL starts, announced
// by the control plane once the workers serve (those with a healthy backend, nf/route_announcement.hpp),
// withdrawn and announced again by `ctl drain-instance` and `undrain-instance`, and withdrawn at the stop
// before the workers end (they serve on for the announcement's linger).
//
// Stop: when `stop` turns true (a signal) or `ctl stop` asks, every worker ends at its next tick (within kTick), closes its
// view of the ports, and leaves its last counters; the ports stop, the mbufs are counted back into their
// pool, and the report is returned. `stop` is read during the start too, after each of its steps (the
// EAL, the ports, each worker's function instance: a large Maglev table or connection table takes
// seconds): once it is true no further step begins, no worker serves, and the report says so.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/nf_kind.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/packet/mac_address.hpp"
#include "flowtrack/runtime/live_counters.hpp"
#include "flowtrack/runtime/state_store.hpp"

namespace flowtrack {

struct LiveServiceOptions {
  NfKind nf = NfKind::fwd;
  unsigned workers = 1;
  std::size_t burst = kDefaultBurst;
  std::vector<std::string> eal_arguments;
  DataplaneConfig plane;
  // The chosen function's configuration (slb; lb and concury; nat); the others are not read.
  StatelessLbConfig slb;
  StatefulLbConfig lb;
  NatConfig nat;
  // nat and lb: the state file read at the start and written at the stop (state_store.hpp).
  StateFileOptions state;
};

// What the service tells whoever runs it, on the control plane's thread.
class LiveObserver {
 public:
  struct Port {
    std::string device;
    MacAddress mac;
  };
  virtual ~LiveObserver() = default;
  // The ports are up, the workers about to start.
  virtual void started(const std::vector<Port>& /*ports*/, unsigned /*workers*/, unsigned /*rx_queues*/) {}
  // Before the start, with a state file: what was restored from it, or why the run starts empty.
  virtual void state(const std::string& /*note*/) {}
  // A NAT pair's turns: standing by, taking over (why, and what the copy held), stepping down; an LB's
  // link to its peers at the end: what it told and held.
  virtual void pair(const std::string& /*note*/) {}
  // With [dataplane.announce]: what went wrong in telling the routing speaker (route_announcer.hpp).
  virtual void route(const std::string& /*note*/) {}
  // Every stats interval: the counters so far, the ones of the interval before, and its length.
  virtual void stats(const LiveCounters& /*now*/, const LiveCounters& /*before*/, Nanos /*interval*/, Nanos /*since_start*/) {}
};

struct LiveReport {
  LiveCounters counters;
  unsigned workers = 0;
  double seconds = 0;
  std::size_t mbufs_missing = 0;  // mbufs that did not come back to their pool: 0 unless one leaked
  bool stopped_during_start = false;  // `stop` came before the workers served: nothing was forwarded
};

// Runs until `stop` turns true or a worker fails. Throws StateRefused when the state file is missing or
// refused (and the operator did not ask to start empty), std::runtime_error naming the problem when it
// cannot start (EAL arguments, ports, control socket, metrics address, the block log) or a worker failed.
LiveReport run_live_service(const LiveServiceOptions& options, const std::atomic<bool>& stop, LiveObserver& observer);

// The counters board that DPDK telemetry and Prometheus read: DPDK's telemetry cannot unregister its
// commands, so the board lives as long as the process (never destroyed: no exit-time race with the
// telemetry thread).
CounterBoard& live_counter_board();

}  // namespace flowtrack
