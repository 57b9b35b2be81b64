// "lb": the stateful L4 load balancer ([lb-flowtables]'s FlowIPManager + FlowIPLoadBalancer and its reverse
// element, [conntrack-study]'s use case). A connection to a service (VIP, port, protocol) gets a backend when
// its first packet arrives, by the configured policy; the connection tracker remembers the choice, so
// every later packet of the connection, in either direction, is rewritten the same way whatever
// happens to the backend pool meanwhile (add, drain, remove, weight change: only new connections see
// the new pool):
//   client -> VIP:port          becomes  client -> backend:port'   (destination rewritten)
//   backend:port' -> client     becomes  VIP:port -> client        (source restored)
// port' is the backend's port, or the client's destination port when the backend has none. Checksums
// (IP, TCP, UDP) are updated incrementally (RFC 1624); a UDP checksum of 0 (none) stays 0. The tracker
// holds both tuples of the connection, the second being the backend's reply tuple, so a reply finds
// its connection in the same single lookup.
//
// A first packet is any packet to a service that belongs to no tracked connection, or a client's SYN on
// the tuple of one that ended (time_wait, close: a reused port), which ends it at once. For TCP, a first
// packet without SYN means the connection's state was lost (a restart, a failover, an expiry while
// idle); `non_syn_first` says what it gets: `consistent` (default) the Maglev choice whatever the
// policy, so it most likely reaches the backend it had (the one Maglev gave it, or any balancer with
// the same pool gives it); `policy` the configured policy, like a SYN; `drop` nothing (counted as
// NfDrop::non_syn_first; the client's retransmissions are dropped too, until it gives up and
// reconnects). UDP has no SYN: the balancer cannot tell a new UDP flow from one whose state was lost,
// so every first UDP packet is a new connection and gets the configured policy.
//
// When the table is full a new connection is dropped and counted (NfDrop::table_full), or, with
// `stateless_when_full`, forwarded by the consistent choice without state (its replies, which find no
// connection, get the VIP of the first service listing the backend's endpoint, as in the stateless
// LB); a live connection is never evicted to make room.
//
// A backend marked down (PoolAction::down: a failed health check) takes no new connection; a UDP flow
// on it moves to a backend in service with its next datagram from the client, a TCP connection stays.
//
// With `new_connection_rate`, first packets above that rate (a flood of SYNs from spoofed sources)
// create no state: they are forwarded by the consistent choice and counted (`over_rate`), so a flood
// cannot fill the tracker (new_connection_limiter.hpp); their replies get the VIP back as a full
// table's do with stateless_when_full.
//
// Pool changes (add, drain, reweight, remove a backend) reach it between bursts through apply()
// (TakesPoolChanges, pool_schedule.hpp): from a replay's schedule, `flowtrack ctl`, health checks.
//
// A service in tunnel mode (ServiceConfig::tunnel, tunnel.hpp) gets its packets to the backend in IPIP or
// GUE instead of rewritten, and its backends answer the clients directly: its connections are tracked
// by their one tuple (ConnTracker::create_one_way), their TCP state followed on the clients' packets.
//
// The boundary. On live ports (NfPacket::arrival, the ports' roles), a packet that arrived on the
// clients' port goes on only to a service (VIP, port, protocol): as a connection's first packet, or one
// of a connection in its original direction. Anything else from that side, whatever its destination (a
// backend's address, the VIP on another port, a reply tuple forged from the clients' side), is dropped
// and counted (NfDrop::not_to_service): the backends' network is not reachable from the clients'
// through the balancer. Packets from the backends' port are a tracked connection's answers, or pass
// untouched (the backends' own traffic out). On a replay, where no port says whence a packet came,
// packets that are neither to a service nor of a tracked connection pass untouched.
//
// Each backend counts its live connections by phase (Backend::by_phase: opening, established,
// closing, tcp_state.hpp), following each connection's TCP state as its packets move it.
//
// Several instances behind ECMP: with a deployment key (StatefulLbConfig::deployment_key) the consistent
// choice reads the key's hash of the tuple, the same in every instance that has the key, and the policy
// must be maglev; instances with the same key and the same pool (by names and weights, in any order)
// give every new connection the same backend, so any of them may carry its next packet (docs/design/
// network-functions.md, "Instances that agree").
//
// Connections off today's choice (lb_exceptions.hpp): with share_exceptions(), the balancer marks the
// connections whose backend is not the consistent choice of the pool as it is now (reviewed at every
// pool change), tells its sink of each one that becomes or stops being one (a change, its end), and
// gives a packet that finds no state (a TCP packet without SYN, a UDP datagram) the backend a peer
// told of for its tuple before the consistent choice.
//
// State as plain data (lb_snapshot.hpp): snapshot() and restore() carry the pool as changed since the
// start and every connection with its backend over to a fresh instance (a restart's state file).
#pragma once

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowtrack/conntrack/conn_tracker.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/burst_matches.hpp"
#include "flowtrack/nf/internal/lb_plan.hpp"
#include "flowtrack/nf/lb_exceptions.hpp"
#include "flowtrack/nf/lb_snapshot.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/new_connection_limiter.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/nf/service_index.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

// The backend a connection was given, kept in its tracker record.
struct LbAssignment {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t service = kNone;
  std::uint32_t backend = kNone;
};

// What the stateful LB counts besides NfCounters.
struct StatefulLbStats {
  std::uint64_t over_rate = 0;  // first packets forwarded without state, above new_connection_rate
  std::uint64_t peer_exceptions_taken = 0;  // connections opened on the backend a peer told of
  std::uint64_t exception_events = 0;       // told to the sink of shared exceptions
};

// Table: the connection table; Aging: the tracker's expiry policy (conn_tracker.hpp).
template <FlowTable Table, AgingPolicy Aging = TimerWheel>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
class StatefulLb {
 public:
  explicit StatefulLb(const StatefulLbConfig& config, Nanos start = 0)
      : config_(config),
        tracker_(config.max_connections, config.timeouts, connection_wheel(start)),
        rng_(config.seed),
        limiter_(config.new_connection_rate, config.burst_or_default()) {
    if (config.deployment_key && config.policy != LbPolicy::maglev) {
      throw std::invalid_argument("lb: with a deployment key the policy must be maglev (the others choose per instance)");
    }
    for (const ServiceConfig& s : config.services) {
      service_index_.add(s);
      append_service(services_, s, config.maglev_size);
    }
  }

  // Three stages over the burst: lookup (every IPv4 packet with ports, in bulk), state (per packet in
  // order: the connection, opened by open() for a first packet; the tracker's update; what the rewrite
  // will write), rewrite (per packet: the headers, the verdict).
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    matches_.lookup(tracker_, burst, [&](std::size_t i) { return burst[i].parsed.ip_version == 4 && burst[i].parsed.has_ports; });
    prefetch_openings(burst);
    out.stage_done(NfStage::lookup);
    for (std::size_t i = 0; i < burst.size(); ++i) plans_[i] = track(burst[i], i);
    out.stage_done(NfStage::state);
    for (std::size_t i = 0; i < burst.size(); ++i) out.verdict(burst[i], rewrite(burst[i], plans_[i]));
    out.stage_done(NfStage::rewrite);
  }

  // Ages connections out; their backends' live counts drop.
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) {
    const std::size_t n = tracker_.expire(now, budget, [&](ConnId conn, const auto& connection) {
      release_backend(connection);
      if (exception_sink_ != nullptr) mark_exception(conn, connection, false);
    });
    counters_.connections_expired += n;
    return n;
  }

  // A pool change that has passed check_pool_changes against the changes applied before it: only new
  // connections see it.
  void apply(const PoolChange& change) {
    apply_pool_change(change, services_);
    if (exception_sink_ != nullptr) review_exceptions();
  }

  // Shares the connections off today's choice: their events go to `sink`, and first packets take the
  // backends `peers` holds (either may be null: events only, or peers' exceptions only). Before the
  // first burst; the connections already tracked are reviewed at once. Throws std::invalid_argument
  // unless the policy is maglev (any other is per instance: every connection would be an exception),
  // or for a backend name too long to share.
  void share_exceptions(LbExceptionSink* sink, const LbPeerExceptions* peers) {
    if (config_.policy != LbPolicy::maglev) throw std::invalid_argument("lb: sharing connections off today's choice needs the maglev policy");
    if (const auto name = unshareable_backend_name(config_)) {
      throw std::invalid_argument("lb: backend '" + *name + "': a name longer than " + std::to_string(kMaxSharedBackendName) +
                                  " characters cannot be shared");
    }
    exception_sink_ = sink;
    peer_exceptions_ = peers;
    if (sink == nullptr) return;
    marks_.size_for(tracker_.capacity());
    review_exceptions();
  }
  // The connections off today's choice now (while sharing them).
  std::size_t exceptions() const { return marks_.count(); }
  bool is_exception(ConnId conn) const { return exception_sink_ != nullptr && marks_.marked(conn); }
  // Each of them as a `became` event: what a peer that asks for everything is sent.
  std::vector<LbExceptionEvent> exception_events() const {
    std::vector<LbExceptionEvent> events;
    tracker_.for_each([&](ConnId conn, const auto& c) {
      if (is_exception(conn)) events.push_back(became_event(c));
    });
    return events;
  }

  // The state as plain data at `now` (lb_snapshot.hpp): what a restart carries over.
  LbSnapshot snapshot(Nanos now) const {
    LbSnapshot s;
    for (const Service& service : services_) {
      LbSnapshot::Service& saved = s.services.emplace_back();
      const ServiceConfig& c = service.config();
      saved = {c.name, c.vip, c.port, c.protocol, {}};
      for (const Backend& b : service.backends()) {
        saved.backends.push_back({b.config.name, b.config.address, b.config.port, b.config.weight, b.removed,
                                  b.total_connections, b.smooth_weight, b.down});
      }
    }
    s.connections.reserve(tracker_.size());
    tracker_.for_each([&](ConnId conn, const auto& connection) {
      s.connections.push_back({tracker_.save(conn, now), connection.payload.service, connection.payload.backend});
    });
    return s;
  }

  // Puts a snapshot back into this balancer, which must be fresh (no connection yet), at `now`. Throws
  // std::invalid_argument naming what does not fit (a service this configuration lacks, a connection
  // naming no backend or not going to the one it names...); the balancer is then unusable.
  void restore(const LbSnapshot& s, Nanos now) {
    const auto refuse = [](const std::string& what) { throw std::invalid_argument("lb state: " + what); };
    if (tracker_.size() != 0) refuse("restored into a balancer that is not fresh");
    if (s.services.size() != services_.size()) refuse("another set of services");
    for (std::size_t i = 0; i < services_.size(); ++i) {
      const LbSnapshot::Service& saved = s.services[i];
      const ServiceConfig& c = services_[i].config();
      if (saved.name != c.name || saved.vip != c.vip || saved.port != c.port || saved.protocol != c.protocol) {
        refuse("service " + saved.name + " is not this configuration's service " + c.name);
      }
      std::vector<Backend> backends;
      for (const LbSnapshot::Backend& b : saved.backends) {
        backends.push_back({.config = {b.name, b.address, b.port, b.weight}, .removed = b.removed, .down = b.down,
                            .total_connections = b.total_connections, .smooth_weight = b.smooth_weight});
      }
      // As the constructor built them: a service takes the table of the one before it when their pools match.
      const Service* previous = i == 0 ? nullptr : &services_[i - 1];
      if (const auto problem = services_[i].restore_backends(std::move(backends), previous)) {
        refuse("service " + c.name + ": " + *problem);
      }
    }
    for (const LbSnapshot::Connection& saved : s.connections) {
      if (saved.service >= services_.size() || saved.backend >= services_[saved.service].backends().size()) {
        refuse("a connection names no backend");
      }
      Service& svc = services_[saved.service];
      const SavedConnection<FlowKeyV4>& c = saved.connection;
      // A tunnel's connection is tracked by its one tuple (create_one_way), any other by its backend's reply too.
      const bool tunnels = svc.config().tunnel.tunnels();
      const FlowKeyV4 reply = tunnels ? c.original : reply_of(c.original, svc.backends()[saved.backend].config);
      if (service_of(c.original) != saved.service || c.one_way != tunnels || !(c.reply == reply)) {
        refuse("a connection that does not go to the backend it names");
      }
      const CreateResult created = tracker_.restore(c, flow_hash(c.original), flow_hash(c.reply), now);
      if (created.status != CreateStatus::created) {
        refuse(created.status == CreateStatus::full ? "more connections than max_connections" : "a connection's tuple twice");
      }
      tracker_.payload(created.match.conn) = {saved.service, saved.backend};
      svc.backends()[saved.backend].carry_over(Tracker::phase(tracker_.connection(created.match.conn)));
    }
  }

  const std::vector<Service>& services() const { return services_; }
  using Tracker = ConnTracker<Table, LbAssignment, Aging>;
  const Tracker& tracker() const { return tracker_; }
  // The memory the per-packet lookups range over: the tracker's (table, connections, timers); the
  // services' consistent-hash tables are a few hundred KiB and stay in the caches.
  std::size_t state_bytes() const { return tracker_.memory_bytes(); }
  const NfCounters& counters() const { return counters_; }
  const StatefulLbStats& stats() const { return stats_; }
  // The backend a live connection was given: (service index, backend index).
  LbAssignment assignment(ConnId conn) const { return tracker_.payload(conn); }

 private:
  static constexpr std::uint32_t kNoService = LbAssignment::kNone;

  using Plan = LbPlan;

  // For the burst's packets that found no connection and are to a service, in order, what opening their
  // connections will write (ConnTracker::prefetch_create), so that those misses overlap as the lookups'
  // do: with Maglev, whose choice changes nothing and can be made ahead, the reply tuple's buckets too.
  // Hints only: open() decides, and a packet that turns out not to open costs a wasted prefetch.
  void prefetch_openings(std::span<const NfPacket> burst) const {
    std::size_t nth = 0;
    for (std::size_t i = 0; i < burst.size(); ++i) {
      if (!matches_.looked_up(i) || matches_.prefetch_hint(i)) continue;
      const FlowKeyV4& key = burst[i].parsed.key4;
      const std::uint32_t service = service_of(key);
      if (service == kNoService) continue;
      const Service& svc = services_[service];
      const std::uint32_t backend = config_.policy == LbPolicy::maglev ? svc.consistent_choice(choice_hash_of(burst[i])) : Service::kNoBackend;
      if (backend == Service::kNoBackend || svc.config().tunnel.tunnels()) {  // a tunnel's connection has no reply tuple
        tracker_.prefetch_create(nth++);
      } else {
        tracker_.prefetch_create(nth++, flow_hash(reply_of(key, svc.backends()[backend].config)));
      }
    }
  }

  // What a backend's answers to a connection carry: the tuple the tracker keeps as the reply.
  static FlowKeyV4 reply_of(const FlowKeyV4& key, const BackendConfig& b) {
    FlowKeyV4 reply = key;
    reply.src_addr = b.address;
    reply.dst_addr = key.src_addr;
    reply.src_port = b.port != 0 ? b.port : key.dst_port;
    reply.dst_port = key.src_port;
    return reply;
  }

  // The established path: the match, the tracker's update, the plan. A packet of no tracked connection
  // takes open() first. Inlined into the burst's loop: a call a packet cost more than its body's savings.
  [[gnu::always_inline]] Plan track(NfPacket& packet, std::size_t i) {
    const bool from_clients = packet.arrival == PortRole::clients;
    if (!matches_.looked_up(i)) return {.verdict = from_clients ? counters_.drop(NfDrop::not_to_service) : counters_.pass()};
    ConnMatch match = matches_.match(tracker_, i, packet);
    // An answer's tuple from the clients' side is forged: only a backend sends it.
    if (from_clients && match && match.direction == Direction::reply) return {.verdict = counters_.drop(NfDrop::not_to_service)};
    if (match && (begins_anew(match, packet.parsed) || leaves_down_backend(match, packet.parsed))) {
      end_connection(match.conn);
      match = {};
    }
    if (!match) {
      const Opening opening = open(packet, packet.hash, packet.time);
      if (!opening.match) return {.verdict = opening.verdict};
      match = opening.match;
    }
    const LbAssignment a = tracker_.payload(match.conn);
    Service& svc = services_[a.service];
    Backend& backend = svc.backends()[a.backend];
    // The backend's gauges follow the connection's TCP phase (any other protocol stays established):
    // of the states a connection goes through, two or three change its phase.
    tracker_.update(match, packet.parsed, packet.wire_length, packet.time, [&](TcpState from, TcpState to) {
      if (tcp_phase(from) != tcp_phase(to)) backend.move(tcp_phase(from), tcp_phase(to));
    });
    if (match.direction == Direction::reply || reaches_backend(packet, svc.config().tunnel)) {
      backend.count(match.direction, packet.wire_length);
    }
    if (match.direction == Direction::original) return plan_to_backend(packet, backend.config, svc.config().tunnel);
    return {.rewrites = true, .to_backend = false, .address = svc.config().vip, .port = svc.config().port};
  }

  // A client's SYN (without ACK) on a tuple whose connection the tracker saw end (time_wait after both
  // FINs, close after a RST) opens a new connection on a reused port: it gets the policy's backend like
  // any first packet, not the old connection's, which may be draining or removed since.
  bool begins_anew(const ConnMatch& match, const ParsedPacket& p) const {
    if ((p.tcp_flags & (tcpflag::kSyn | tcpflag::kAck)) != tcpflag::kSyn || match.direction != Direction::original ||
        p.key4.protocol != ipproto::kTcp) {
      return false;
    }
    const TcpState state = tracker_.connection(match.conn).tcp.state;
    return state == TcpState::time_wait || state == TcpState::close;
  }

  // A client's UDP datagram on a flow whose backend is down (a failed health check): UDP has no
  // connection to break, so the flow moves, as a first packet, to a backend in service. A TCP
  // connection stays where it is (its backend may still finish it; a new one would be refused).
  bool leaves_down_backend(const ConnMatch& match, const ParsedPacket& p) const {
    if (p.key4.protocol != ipproto::kUdp || match.direction != Direction::original) return false;
    const LbAssignment a = tracker_.payload(match.conn);
    return services_[a.service].backends()[a.backend].down;
  }

  // A connection's end, by expiry or early: its backend has one live connection fewer.
  void release_backend(const typename Tracker::Connection& c) {
    services_[c.payload.service].backends()[c.payload.backend].leave(Tracker::phase(c));
  }

  void end_connection(ConnId conn) {
    release_backend(tracker_.connection(conn));
    if (exception_sink_ != nullptr) mark_exception(conn, tracker_.connection(conn), false);
    tracker_.destroy(conn);
    ++counters_.connections_expired;  // its end, early: created and expired still balance
  }

  Verdict rewrite(NfPacket& packet, const Plan& plan) { return apply_lb_plan(packet, plan, counters_); }

  // What open() did with a connection's first packet: a match to continue on the established path, or
  // no match and the packet's final verdict (passed, dropped, or forwarded without state).
  struct Opening {
    ConnMatch match;
    Verdict verdict = Verdict::drop;
  };

  // The first packet of a connection, out of line: the service, the policy's backend, the tracker's
  // new connection (both tuples), the backend's counts.
  [[gnu::noinline]] Opening open(NfPacket& packet, std::uint32_t hash, Nanos now) {
    const ParsedPacket& p = packet.parsed;
    const FlowKeyV4& key = p.key4;
    const std::uint32_t service = service_of(key);
    if (service == kNoService) {
      if (packet.arrival == PortRole::clients) return {{}, counters_.drop(NfDrop::not_to_service)};
      if (forwards_untracked() && restore_untracked_reply(packet)) return {{}, counters_.rewrite()};
      return {{}, counters_.pass()};
    }
    const bool lost_state = key.protocol == ipproto::kTcp && (p.tcp_flags & tcpflag::kSyn) == 0;
    if (lost_state && config_.non_syn_first == NonSynFirst::drop) return {{}, counters_.drop(NfDrop::non_syn_first)};
    Service& svc = services_[service];
    if (!limiter_.admit(now)) {
      ++stats_.over_rate;
      return {{}, send_untracked(packet, svc)};
    }
    const bool consistent = lost_state && config_.non_syn_first == NonSynFirst::consistent;
    const LbPolicy policy = consistent ? LbPolicy::maglev : config_.policy;
    // A connection that may have begun elsewhere (no SYN) goes where a peer said it lives, if one did.
    const std::uint32_t told = lost_state || key.protocol == ipproto::kUdp ? peer_choice(svc, key) : Service::kNoBackend;
    const std::uint32_t backend = told != Service::kNoBackend ? told : svc.choose(policy, policy == LbPolicy::maglev ? choice_hash_of(packet) : hash, rng_);
    if (backend == Service::kNoBackend) return {{}, counters_.drop(NfDrop::no_backend)};
    const CreateResult created = create(key, hash, svc, backend, now);
    if (created.status == CreateStatus::full) {
      if (!config_.stateless_when_full) return {{}, counters_.drop(NfDrop::table_full)};
      return {{}, send_untracked(packet, svc)};
    }
    if (created.status == CreateStatus::reply_taken) return {{}, counters_.drop(NfDrop::tuple_conflict)};
    if (created.status == CreateStatus::created) {
      tracker_.payload(created.match.conn) = {service, backend};
      svc.backends()[backend].join(Tracker::phase(tracker_.connection(created.match.conn)));
      ++counters_.connections_created;
      if (told != Service::kNoBackend) {
        ++stats_.peer_exceptions_taken;
        // Off today's choice here too: this instance tells of it now, as the one it came from did.
        const auto& c = tracker_.connection(created.match.conn);
        if (exception_sink_ != nullptr) mark_exception(created.match.conn, c, told != consistent_choice_of(c));
      }
    }
    return {created.match, Verdict::forward};
  }

  // Tracks a new connection to `backend` of `svc`: by both tuples (the backend's answers come back), or
  // in a tunnel by its own alone (they go to the client directly).
  CreateResult create(const FlowKeyV4& key, std::uint32_t hash, const Service& svc, std::uint32_t backend, Nanos now) {
    if (svc.config().tunnel.tunnels()) return tracker_.create_one_way(key, hash, key.protocol, now);
    const FlowKeyV4 reply = reply_of(key, svc.backends()[backend].config);
    return tracker_.create(key, hash, reply, flow_hash(reply), key.protocol, now);
  }

  // A first packet forwarded without state, to the backend of the consistent choice (counted in its traffic).
  Verdict send_untracked(NfPacket& packet, Service& svc) {
    const std::uint32_t backend = svc.choose(LbPolicy::maglev, choice_hash_of(packet), rng_);
    if (backend == Service::kNoBackend) return counters_.drop(NfDrop::no_backend);
    if (reaches_backend(packet, svc.config().tunnel)) svc.backends()[backend].count(Direction::original, packet.wire_length);
    const BackendConfig& b = svc.backends()[backend].config;
    if (svc.config().tunnel.tunnels()) return send_through_tunnel(packet, svc.config().tunnel, b.address, counters_);
    rewrite_ipv4_address_and_port(packet.frame, packet.parsed, Endpoint::destination, b.address, b.port);
    return counters_.rewrite();
  }

  // The hash the consistent choice reads for a packet's connection: keyed by the deployment key when
  // there is one (the same in every instance of the deployment), else the packet's flow hash.
  std::uint32_t choice_hash_of(const NfPacket& packet) const {
    return choice_hash(config_.deployment_key, packet.parsed.key4, packet.hash);
  }

  // The consistent choice for a tracked connection under today's pool (kNoBackend: no backend takes new ones).
  std::uint32_t consistent_choice_of(const typename Tracker::Connection& c) const {
    return services_[c.payload.service].consistent_choice(choice_hash(config_.deployment_key, c.original, c.original_hash));
  }

  // Every connection marked by whether its backend is off today's choice, the changes told: after a
  // pool change, a scan of the table (one keyed hash a connection; pool changes are rare).
  void review_exceptions() {
    tracker_.for_each([&](ConnId conn, const auto& c) { mark_exception(conn, c, consistent_choice_of(c) != c.payload.backend); });
  }

  void mark_exception(ConnId conn, const typename Tracker::Connection& c, bool exception) {
    if (!marks_.set(conn, exception)) return;
    ++stats_.exception_events;
    exception_sink_->emit(exception ? became_event(c) : LbExceptionEvent::ceased(c.original));
  }

  LbExceptionEvent became_event(const typename Tracker::Connection& c) const {
    return LbExceptionEvent::became(c.original, services_[c.payload.service].backends()[c.payload.backend].config.name);
  }

  // The backend a peer told of for a tuple, if it is in this service's pool (and, for a UDP flow, in
  // service: a UDP flow leaves a down backend); else kNoBackend.
  std::uint32_t peer_choice(const Service& svc, const FlowKeyV4& key) const {
    if (peer_exceptions_ == nullptr || peer_exceptions_->empty()) return Service::kNoBackend;
    const std::optional<std::string> name = peer_exceptions_->find(key);
    if (!name) return Service::kNoBackend;
    const std::vector<Backend>& backends = svc.backends();
    for (std::uint32_t b = 0; b < backends.size(); ++b) {
      if (backends[b].config.name != *name) continue;
      return backends[b].down && key.protocol == ipproto::kUdp ? Service::kNoBackend : b;
    }
    return Service::kNoBackend;
  }

  std::uint32_t service_of(const FlowKeyV4& key) const {
    return service_index_.find(key.dst_addr, key.dst_port, key.protocol);
  }

  // Whether connections may go without state: a full table's (stateless_when_full), or those above the
  // new-connection rate.
  bool forwards_untracked() const { return config_.stateless_when_full || limiter_.limits(); }

  // A packet of no connection from a backend's endpoint: the reply of a connection forwarded without
  // state (forwards_untracked), or of one whose state ended. It gets the VIP and port of the first
  // service listing that endpoint, as in the stateless LB: right when no backend endpoint serves two
  // services. A scan of the pool, only made when connections may go without state. A tunnel-mode
  // service's backends answer its clients directly: none of their answers is its.
  bool restore_untracked_reply(NfPacket& packet) {
    const FlowKeyV4& key = packet.parsed.key4;
    for (Service& s : services_) {
      if (s.config().protocol != key.protocol || s.config().tunnel.tunnels()) continue;
      for (Backend& b : s.backends()) {
        const std::uint16_t port = b.config.port != 0 ? b.config.port : s.config().port;
        if (b.config.address != key.src_addr || port != key.src_port) continue;
        b.count(Direction::reply, packet.wire_length);
        rewrite_ipv4_src(packet.frame, packet.parsed, s.config().vip);
        rewrite_src_port(packet.frame, packet.parsed, s.config().port);
        return true;
      }
    }
    return false;
  }

  StatefulLbConfig config_;
  Tracker tracker_;
  std::vector<Service> services_;
  ServiceIndex service_index_;
  Random rng_;
  NewConnectionLimiter limiter_;
  NfCounters counters_;
  StatefulLbStats stats_;
  BurstMatches<Tracker> matches_;  // of the burst in process_burst()
  LbExceptionSink* exception_sink_ = nullptr;          // null: exceptions not shared (nothing marked)
  const LbPeerExceptions* peer_exceptions_ = nullptr;  // null: no peer's taken
  LbExceptionMarks marks_;                             // sized while exception_sink_ is set
  std::array<Plan, kMaxBurst> plans_;
};

}  // namespace flowtrack
