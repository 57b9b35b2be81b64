// "concury": the Concury load balancer ([concury-thesis], chapter 5) as a network function: per-connection
// consistency with no connection table in the data plane. Each service (VIP, port, protocol; a
// "VIP" of the thesis) has an Othello whose value for a connection's client endpoint (address, port:
// the service fixes the rest of the 4-tuple) is a 12-bit Dcode, and a Dcode -> backend row whose
// ranges follow the weights (compact/concury_lookup.hpp). Every packet to a service takes the same
// path: two hashes, two cell reads, one row read. An unknown connection gets an arbitrary Dcode,
// uniform because the arrays' free cells are random, hence a backend with odds following the weights,
// and all its packets the same backend while the arrays do not change.
//
// The control plane (compact/concury_control.hpp: an OthelloMap per service, nf/internal/concury_learning.hpp)
// learns connections from this data plane's own reports, since flowtrack sees both directions where the
// thesis needed an agent on every backend; it ignores those of connections it knows already:
//   - the cold path: a packet that may open a connection (TCP SYN without ACK; any UDP packet, UDP
//     having no opening) reports the Dcode it got;
//   - the reverse path: a backend's answer reports the backend (the control plane learns from it the
//     connections whose opening this instance never saw: TCP connections met mid-stream);
//   - a TCP FIN or RST, of either side, reports a close (below).
// Learning changes no data-plane array. Only a pool change (the [[change]]s of the stateful LB's
// configuration, applied as the packet clock passes them: add, remove, drain, weight) rewrites the
// arrays, of the services it names only: every known connection keeps its backend, a removed or
// drained backend that still holds known connections keeps one Dcode (its pin), and the arrays are a
// refill of the OthelloMap's graph.
//
// The race the thesis leaves open (a connection born before a rewrite whose report has not arrived
// gets an arbitrary Dcode from the new arrays): reports here are learnt, in packet order, before any
// rewrite, so every connection whose opening came before the rewrite is known to it. What remains is a
// connection met mid-stream and not yet answered: its client packets between the rewrite and the
// backend's first answer may reach another backend. That answer repairs it (the connection is learnt
// with the answering backend and the service's arrays are refilled, so its later packets go back there)
// and is counted (`repairs`). A new connection that lands on a pin (a backend taking no new connections)
// is sent elsewhere the same way (`rehomed`), so a drained or removed backend never gets a new
// connection. Both refills cost O(connections of the service); both are rare.
//
// Where the control plane runs (ControlPlanePlace): on the worker, which learns a burst's reports at its
// end, or on a thread of its own, which the worker hands each burst's reports to over a ring
// (sync/batch_thread.hpp) and goes on. Learning changes no array, so the worker needs the control plane
// only at its sync points: a pool change, a repair, a new connection on a pin, an answer that two
// services' arrays both send to the answering backend, an expiry that may be due, and the counts.
// There it waits until every report handed over has been learnt, then uses the control plane itself
// (the thread is idle until the next hand-over). Reports are learnt in the same order and every
// decision is taken on the same state in both places, so a trace gives the same output, counters and
// stats in both (tested).
//
// The reverse path gives an answer from a backend endpoint the address and port of the service whose
// arrays send the client to that backend; when several services list the endpoint (one backend serving
// several VIPs) and several do, of the first whose control plane knows the connection, else of the first
// of them, and then each of them learns it (which is the connection's own cannot be told; the others
// hold an entry until they forget it); when none does (a repair), of the first listing it.
// Terminations are reported too: a TCP FIN or RST of a service's connection, from the client (the only
// client packet of a known connection that reports) or from the backend (an answer), so that the
// control plane forgets a connection (expire()) the closing timeout after its last one, or the
// configuration's longest timeout (5 days by default) after its last report when it never closes (an
// answer: a connection is protected from rewrites for as long as its backend answers;
// concury_learning.hpp).
//
// A service in tunnel mode (tunnel.hpp) gets its packets to the backend in IPIP or GUE, and its backends
// answer the clients directly: its control plane learns from the cold path alone, and a connection met
// mid-stream is known only once it gets a Dcode of its own (no answer repairs it).
//
// The boundary, on live ports, is the stateful LB's (stateful_lb.hpp): from the clients' port only
// packets to a service go on (NfDrop::not_to_service).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "flowtrack/compact/concury_lookup.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/internal/concury_learning.hpp"
#include "flowtrack/nf/internal/lb_plan.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/nf/service_index.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"

namespace flowtrack {

template <class Item>
class BatchThread;  // sync/batch_thread.hpp, kept out of this header (it brings <thread>)

// Where Concury's control plane learns its reports: on the worker, or on a thread of its own.
enum class ControlPlanePlace : std::uint8_t { worker, own_thread };

// What the Concury function counts besides NfCounters (whose connections_created counts the connections
// its control plane learnt, connections_expired those it forgot).
struct ConcuryStats {
  std::uint64_t rewrites = 0;   // a service's arrays rewritten for a pool change
  std::uint64_t repairs = 0;    // a backend answered a connection the arrays now send elsewhere
  std::uint64_t rehomed = 0;    // a new connection landed on a pin and was sent elsewhere
  // The worker needed its control plane caught up (a pool change, a repair, a pin, an answer two
  // services' arrays claim, an expiry due): with a control plane of its own, the worker waited for it.
  std::uint64_t syncs = 0;
};

class ConcuryLb {
 public:
  static constexpr unsigned kDcodeBits = 12;

  // Uses the services, maglev_size (the bound on backends per service), seed, the longest
  // timeout and max_connections (each service's control plane is sized for its share) of the stateful
  // LB's configuration; the policy and the other table sizes do not apply.
  explicit ConcuryLb(const StatefulLbConfig& config, ControlPlanePlace place = ControlPlanePlace::worker);
  ConcuryLb(ConcuryLb&&) noexcept;
  ConcuryLb& operator=(ConcuryLb&&) noexcept;
  ~ConcuryLb();  // with a thread of its own: after it has learnt every report

  // Three stages: lookup (every packet to a service, in bulk), state (the control-plane lines the worker
  // will read prefetched, when it will read them; per packet in order: the cold and reverse paths' reports, the plan; then the burst's reports handed to the control plane), rewrite.
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    lookup_burst(burst);
    out.stage_done(NfStage::lookup);
    prefetch_control_plane(burst);
    for (std::size_t i = 0; i < burst.size(); ++i) plans_[i] = decide(burst[i], i);
    hand_over_reports();
    out.stage_done(NfStage::state);
    for (std::size_t i = 0; i < burst.size(); ++i) {
      out.verdict(burst[i], apply_lb_plan(burst[i], plans_[i], counters_));
    }
    out.stage_done(NfStage::rewrite);
  }
  // Forgets the connections whose end has come (ConcuryLearning::expire, `budget` queued ends at most),
  // once the earliest is an eighth of the closing timeout overdue (a sync point at most that often).
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget);

  // These wait, with a control plane of its own, until it has learnt every report handed over.
  NfCounters counters() const;
  std::size_t known_connections() const;  // connections the control plane knows, over every service
  std::size_t peak_connections() const;   // the most it knew at once
  std::uint64_t new_connections(std::uint32_t service, std::uint16_t backend) const;  // ever given to it

  const ConcuryStats& stats() const { return stats_; }
  const std::vector<Service>& services() const { return services_; }
  ControlPlanePlace control_plane_place() const;
  // The backend (index in the service) a packet of this client endpoint to service `service` would get
  // now: the arrays' answer, which is the control plane's for every connection it knows.
  std::uint16_t backend_for(std::uint32_t service, std::uint32_t client_addr, std::uint16_t client_port) const;
  // The service a packet to (address, port, protocol) is for, or kNoService.
  static constexpr std::uint32_t kNoService = ServiceIndex::kNone;
  std::uint32_t service_of(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const;
  // A pool change (TakesPoolChanges) that has passed check_pool_changes and check_listing against the
  // changes applied before it: the control plane learns what was handed over, then the service's
  // arrays are rewritten for the new pool; every known connection keeps its backend.
  void apply(const PoolChange& change);
  // A schedule (or the history of live changes with a new one last) that would make a service list more
  // backends over its life than its row has Dcodes: that change's index and the count; nullopt if none.
  static std::optional<std::pair<std::size_t, std::size_t>> listing_beyond(std::span<const PoolChange> changes,
                                                                          std::span<const ServiceConfig> services);

 private:
  // The client endpoint of a connection, its key in the service's structures.
  static std::uint64_t client_key(std::uint32_t address, std::uint16_t port) { return std::uint64_t{address} << 16 | port; }

  void lookup_burst(std::span<const NfPacket> burst);
  // What the worker's control plane will be asked about packet i, from the lookup stage's answers:
  // fn(service, key) for an opening's report, and for each service whose arrays send an answer's client
  // to the answering backend; returns how many services claim an answer (0 for any other packet).
  template <class Fn>
  std::size_t control_plane_questions(const NfPacket& packet, std::size_t i, Fn&& fn) const;
  // The first pass of the state stage: every control-plane line the burst's questions will read first
  // is loaded in two rounds (index cells, then the keys they point at), so that their misses overlap.
  // Only where the worker will read them: with the control plane on the worker, always; with a thread
  // of its own, when the burst has an answer several services claim (a sync point, where the worker
  // learns the burst's reports so far itself) and the thread has learnt everything handed over (else
  // it may be changing those lines).
  void prefetch_control_plane(std::span<const NfPacket> burst) const;
  // A packet that may open a connection (TCP SYN without ACK; any UDP packet).
  static bool may_open(const ParsedPacket& p);
  // A TCP packet with FIN or RST: its connection closes.
  static bool closes(const ParsedPacket& p);
  using Met = ConcuryLearning::Met;
  // The close a packet that closes() reports, `fin` being its sender's FIN.
  static Met close_met(const ParsedPacket& p, Met fin) { return (p.tcp_flags & tcpflag::kRst) != 0 ? Met::reset : fin; }
  static Met answer_met(const ParsedPacket& p) { return closes(p) ? close_met(p, Met::backend_fin) : Met::answer; }  // a backend's packet
  LbPlan decide(NfPacket& packet, std::size_t i);
  // The cold path: a packet that may open a connection; returns the backend it goes to.
  [[gnu::noinline]] std::uint16_t open(std::uint32_t service, std::uint64_t key, compact::ConcuryLookup::Answer arrays, Met met,
                                       Nanos now);
  // A new connection whose Dcode is a pin's (at a sync point): sent to another backend, unless it is the
  // known connection's.
  [[gnu::noinline]] std::uint16_t open_on_pin(std::uint32_t service, std::uint64_t key, std::uint16_t pin, Met met, Nanos now);
  [[gnu::noinline]] LbPlan answer(NfPacket& packet, std::size_t i);
  using ServiceBackend = std::pair<std::uint32_t, std::uint16_t>;
  using ServiceListing = std::vector<ServiceBackend>;
  // The Dcode that service listing[k]'s arrays give an answer's client (packet i's, `key`) when they
  // send it to listing[k]'s backend: the lookup stage's answers when `looked`, else a lookup now.
  std::optional<std::uint32_t> claim(std::size_t i, const ServiceListing& listing, std::size_t k, std::uint64_t key,
                                     bool looked) const;
  // An answer that no service's arrays, or more than one's, send to the answering backend (at a sync
  // point): the first listing service whose control plane knows the connection, else a learn or a repair.
  [[gnu::noinline]] LbPlan answer_at_sync(const NfPacket& packet, std::size_t i, const ServiceListing& listing, bool looked);
  // An answer's plan: its source becomes the service's VIP and port; counted in the answering backend's traffic.
  LbPlan restore_service(const ServiceBackend& answering, std::uint32_t wire_length);
  [[gnu::noinline]] void apply_change(const PoolChange& change);
  // Rewrites the service's arrays from its control plane.
  void publish(std::uint32_t service);
  // The same after keep() made `key` known (`row_changed`: as keep() returned): unless the row changed,
  // the arrays in use with the cells the key's Dcode needs changed (ConcuryControl::image_after_keep).
  void publish_kept(std::uint32_t service, std::uint64_t key, bool row_changed);
  // The service's pool as the control plane takes it: every backend ever listed, weight 0 for those
  // that take no new connections.
  void pool_of(std::uint32_t service, std::vector<std::uint16_t>& backends, std::vector<double>& weights) const;
  void index_backends();

  // A report for the control plane, handed over with the burst's others at the burst's end.
  void report(const ConcuryLearning::Report& r);
  // A connection made known at a sync point by ConcuryControl::keep (a repair, a pin's rehoming);
  // `fresh`: the control plane did not know it before.
  void kept(const ConcuryLearning::Report& r, bool fresh);
  // What every report, handed over or kept, tells this side: what expire() may find due.
  void note(const ConcuryLearning::Report& r);
  void hand_over_reports();
  void learn_here();  // the staged reports learnt by the worker (the control plane is its own then)
  // A sync point: every report handed over (and this burst's so far) learnt; the control plane is then
  // the worker's to use until the next hand-over.
  void settle();

  std::vector<Service> services_;
  ServiceIndex service_index_;
  // endpoint_key(backend address, port, protocol) -> every (service, backend) listing it
  absl::flat_hash_map<std::uint64_t, ServiceListing> backend_index_;
  // The control plane, and when it has a thread of its own, that thread (declared after it, so that
  // it stops first). Both behind pointers: the thread holds the control plane's address, and moves of
  // this function must not change it.
  std::unique_ptr<ConcuryLearning> learning_;
  std::unique_ptr<BatchThread<ConcuryLearning::Report>> thread_;
  std::array<ConcuryLearning::Report, kMaxBurst> staged_;  // the burst's reports, handed over when full
  std::vector<std::pair<std::size_t, std::uint32_t>> claimed_;  // answer_at_sync's: (listing index, Dcode)
  std::size_t staged_count_ = 0;
  // What expire() may find due without asking the control plane: its next end when it last said
  // (kNever: none), and the first report, the first close report and the first datagram report since
  // (kNever: none), whose ends come no earlier than the long, the closing and the datagram timeout
  // after them (report times never decrease).
  static constexpr Nanos kNever = ~Nanos{0};
  Nanos next_end_ = kNever, first_report_ = kNever, first_close_ = kNever, first_datagram_ = kNever;
  Nanos oldest_handshake_ = kNever;  // the same for half-open states (ConcuryLearning::oldest_handshake)
  compact::ConcuryLookup lookup_;
  NfCounters counters_;
  ConcuryStats stats_;

  // The burst's lookups, in one bulk lookup: services_of_[i] is packet i's service (kNoService: not to
  // a service); its query (or, for a backend's answer, listing_of_[i]'s queries, one per service listing
  // the backend, in order) starts at first_query_[i], and the arrays' answers sit at the same index.
  // Every rewrite of arrays bumps generation_: a packet looked up under another generation is looked
  // up again, alone, so that the burst sees what one packet at a time would.
  compact::ConcuryLookup::Answer looked_up(std::size_t query) const;
  static constexpr std::size_t kQueries = 4 * kMaxBurst;
  std::array<std::uint32_t, kMaxBurst> services_of_;
  std::array<std::uint16_t, kMaxBurst> first_query_;
  std::array<const ServiceListing*, kMaxBurst> listing_of_;
  std::array<compact::LbQuery, kQueries> queries_;
  std::array<std::uint16_t, kQueries> answers_;
  std::array<std::uint32_t, kQueries> answer_dcodes_;
  std::uint64_t generation_ = 0, burst_generation_ = 0;
  std::array<LbPlan, kMaxBurst> plans_;
};

}  // namespace flowtrack
