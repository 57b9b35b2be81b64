// "concury": the Concury load balancer (seed 001, chapter 5) as a network function: per-connection
// consistency with no connection table in the data plane. Each service (VIP, port, protocol; a
// "VIP" of the thesis) has an Othello whose value for a connection's client endpoint (address, port:
// the service fixes the rest of the 4-tuple) is a 12-bit Dcode, and a Dcode -> backend row whose
// ranges follow the weights (compact/concury_lookup.hpp). Every packet to a service takes the same
// path: two hashes, two cell reads, one row read. An unknown connection gets an arbitrary Dcode,
// uniform because the arrays' free cells are random, hence a backend with odds following the weights,
// and all its packets the same backend while the arrays do not change.
//
// The control plane (compact/concury_control.hpp: an OthelloMap per service) learns connections from
// this data plane's own reports, since flowtrack sees both directions where the thesis needed an agent
// on every backend:
//   - the cold path: a packet that may open a connection (TCP SYN without ACK; any UDP packet, UDP
//     having no opening) of a connection the control plane does not know reports the Dcode it got;
//   - the reverse path: a backend's answer of a connection the control plane does not know (one whose
//     opening this instance never saw: a TCP connection met mid-stream) reports the backend.
// Learning changes no data-plane array. Only a pool change (the [[change]]s of the stateful LB's
// configuration, applied as the packet clock passes them: add, remove, drain, weight) rewrites the
// arrays, of the services it names only: every known connection keeps its backend, a removed or
// drained backend that still holds known connections keeps one Dcode (its pin), and the arrays are a
// refill of the OthelloMap's graph.
//
// The race the thesis leaves open (a connection born before a rewrite whose report has not arrived
// gets an arbitrary Dcode from the new arrays): reports here are made in packet order on the worker
// that makes the rewrite, so every connection whose opening came before the rewrite is known to it.
// What remains is a connection met mid-stream and not yet answered: its client packets between the
// rewrite and the backend's first answer may reach another backend. That answer repairs it (the
// connection is learnt with the answering backend and the service's arrays are refilled, so its later
// packets go back there) and is counted (`repairs`). A new connection that lands on a pin (a backend
// taking no new connections) is sent elsewhere the same way (`rehomed`), so a drained or removed
// backend never gets a new connection. Both refills cost O(connections of the service); both are rare.
//
// The reverse path gives an answer from a backend endpoint the address and port of the service whose
// control plane knows the connection; when several services list the endpoint (one backend serving
// several VIPs) and none knows it, of the first whose arrays send the client to that backend, else of
// the first listing it. Terminations are not reported: the control plane forgets a connection
// (expire()) once the longest timeout of the configuration (5 days by default) has passed since it
// learnt it, so a connection of a longer life is no longer protected from the next rewrite.
//
// `enable_audit()` makes the function check itself against an exact map of every connection's first
// backend (outside Concury's structures, for the benchmark's check): `violations` counts packets of a
// connection sent to another backend than its first, `false_hits` packets sent to a backend that is
// not in the service's pool or, for a connection's first packet, takes no new connections.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/compact/concury_lookup.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/lb_plan.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"

namespace flowtrack {

// What the Concury function counts besides NfCounters (whose connections_created counts the connections
// its control plane learnt, connections_expired those it forgot).
struct ConcuryStats {
  std::uint64_t rewrites = 0;   // a service's arrays rewritten for a pool change
  std::uint64_t repairs = 0;    // a backend answered a connection the arrays now send elsewhere
  std::uint64_t rehomed = 0;    // a new connection landed on a pin and was sent elsewhere
  std::uint64_t violations = 0;  // audit: a packet sent to another backend than its connection's first
  std::uint64_t false_hits = 0;  // audit: a packet sent to a backend outside the pool (or drained, when new)
};

class ConcuryLb {
 public:
  static constexpr unsigned kDcodeBits = 12;

  // Uses the services, the changes, maglev_size (the bound on backends per service), seed, the longest
  // timeout and max_connections (each service's control plane is sized for its share) of the stateful
  // LB's configuration; the policy and the other table sizes do not apply.
  explicit ConcuryLb(const StatefulLbConfig& config);

  // Three stages: lookup (every packet to a service, in bulk), state (the control-plane lines the
  // burst will ask about prefetched, then per packet in order: the pool changes due, the cold and
  // reverse paths' reports, the plan), rewrite.
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    lookup_burst(burst);
    out.stage_done(NfStage::lookup);
    prefetch_control_plane(burst);
    for (std::size_t i = 0; i < burst.size(); ++i) plans_[i] = decide(burst[i], i);
    out.stage_done(NfStage::state);
    for (std::size_t i = 0; i < burst.size(); ++i) {
      out.verdict(burst[i], apply_lb_plan(burst[i], plans_[i]) ? counters_.rewrite() : plans_[i].verdict);
    }
    out.stage_done(NfStage::rewrite);
  }
  // Forgets, in learning order, up to `budget` connections learnt more than the longest timeout ago.
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget);

  const NfCounters& counters() const { return counters_; }
  const ConcuryStats& stats() const { return stats_; }
  const std::vector<Service>& services() const { return services_; }
  // Connections the control plane knows, over every service.
  std::size_t known_connections() const;
  // The backend (index in the service) a packet of this client endpoint to service `service` would get
  // now: the control plane's when it knows the connection, else the arrays'.
  std::uint16_t backend_for(std::uint32_t service, std::uint32_t client_addr, std::uint16_t client_port) const;
  // The service a packet to (address, port, protocol) is for, or kNoService.
  static constexpr std::uint32_t kNoService = ~std::uint32_t{0};
  std::uint32_t service_of(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const;
  void enable_audit() { audit_ = true; }

 private:
  // The client endpoint of a connection, its key in the service's structures.
  static std::uint64_t client_key(std::uint32_t address, std::uint16_t port) { return std::uint64_t{address} << 16 | port; }

  void lookup_burst(std::span<const NfPacket> burst);
  // A packet that may open a connection (TCP SYN without ACK; any UDP packet).
  static bool may_open(const ParsedPacket& p);
  // The control-plane questions decide() will ask for packet i, from the lookup stage's answers:
  // fn(service, key) for an opening's learn, and for each service whose arrays send an answer's client
  // to the answering backend (answer()'s dip_of). A pool change within the burst may make decide()
  // ask other ones: these are hints, for prefetch_control_plane.
  template <class Fn>
  void control_plane_questions(const NfPacket& packet, std::size_t i, Fn&& fn) const;
  // The first pass of the state stage: every control-plane line the burst's questions will read first
  // is loaded in two rounds (index cells, then the keys they point at), so that their misses overlap.
  void prefetch_control_plane(std::span<const NfPacket> burst) const;
  LbPlan decide(NfPacket& packet, std::size_t i);
  // The cold path: a packet that may open a connection; returns the backend it goes to.
  [[gnu::noinline]] std::uint16_t open(std::uint32_t service, std::uint64_t key, compact::ConcuryLookup::Answer arrays, Nanos now);
  [[gnu::noinline]] LbPlan answer(NfPacket& packet, std::size_t i);
  // An answer's plan: its source becomes the service's VIP and port.
  LbPlan restore_service(std::uint32_t service) const;
  [[gnu::noinline]] void apply_change(const PoolChange& change);
  void audit(std::uint32_t service, std::uint64_t key, std::uint16_t backend, bool opening);
  // Rewrites the service's arrays from its control plane.
  void publish(std::uint32_t service);
  // The service's pool as the control plane takes it: every backend ever listed, weight 0 for those
  // that take no new connections.
  void pool_of(std::uint32_t service, std::vector<std::uint16_t>& backends, std::vector<double>& weights) const;
  void index_backends();

  // A connection the control plane learnt, and when: learning happens in time order, so the queue is
  // sorted by time and expire() pops its front.
  struct Learnt {
    Nanos at;
    std::uint32_t service;
    std::uint64_t key;
  };
  void learnt(std::uint32_t service, std::uint64_t key, Nanos now);

  std::vector<PoolChange> changes_;
  Nanos forget_after_;
  std::deque<Learnt> learnt_;
  std::vector<Service> services_;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> service_index_;  // endpoint_key(vip, port, protocol) -> service
  // endpoint_key(backend address, port, protocol) -> every (service, backend) listing it
  using ServiceBackend = std::pair<std::uint32_t, std::uint16_t>;
  absl::flat_hash_map<std::uint64_t, std::vector<ServiceBackend>> backend_index_;
  compact::ConcuryControl control_;
  compact::ConcuryLookup lookup_;
  PoolChangeClock schedule_;
  NfCounters counters_;
  ConcuryStats stats_;
  bool audit_ = false;
  absl::flat_hash_map<std::pair<std::uint32_t, std::uint64_t>, std::uint16_t> first_backend_;  // the audit's

  // The burst's lookups, in one bulk lookup: services_of_[i] is packet i's service (kNoService: not to
  // a service); its query (or, for a backend's answer, listing_of_[i]'s queries, one per service listing
  // the backend, in order) starts at first_query_[i], and the arrays' answers sit at the same index.
  // Every rewrite of arrays bumps generation_: a packet looked up under another generation is looked
  // up again, alone, so that the burst sees what one packet at a time would.
  using ServiceListing = std::vector<ServiceBackend>;
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
