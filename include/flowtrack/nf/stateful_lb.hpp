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
// `changes` is a schedule of pool changes that the balancer applies itself as its packet clock passes
// them (pool_schedule.hpp), at the cost of one comparison per packet.
// Packets that are neither to a service nor of a tracked connection pass untouched.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "flowtrack/conntrack/conn_tracker.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/burst_matches.hpp"
#include "flowtrack/nf/lb_plan.hpp"
#include "flowtrack/nf/lb_snapshot.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

// The backend a connection was given, kept in its tracker record.
struct LbAssignment {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t service = kNone;
  std::uint32_t backend = kNone;
};

// Table: the connection table; Aging: the tracker's expiry policy (conn_tracker.hpp).
template <FlowTable Table, AgingPolicy Aging = TimerWheel>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
class StatefulLb {
 public:
  explicit StatefulLb(const StatefulLbConfig& config, Nanos start = 0)
      : config_(config),
        tracker_(config.max_connections, config.timeouts, {.tick = 100 * kNanosPerMilli, .levels = 4, .start = start}),
        rng_(config.seed) {
    for (const ServiceConfig& s : config.services) {
      service_index_.emplace(endpoint_key(s.vip, s.port, s.protocol), static_cast<std::uint32_t>(services_.size()));
      services_.emplace_back(s, config.maglev_size);
    }
    sort_pool_changes(config_.changes);
    if (const auto problem = check_pool_changes(config_.changes, config.services, config.maglev_size)) {
      throw std::invalid_argument(fmt::format("lb: change {}: {}: {}", problem->index, problem->key, problem->problem));
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
    const std::size_t n = tracker_.expire(now, budget, [&](ConnId, const auto& connection) { release_backend(connection.payload); });
    counters_.connections_expired += n;
    return n;
  }

  // The state as plain data at `now` (lb_snapshot.hpp): what a restart carries over.
  LbSnapshot snapshot(Nanos now) const {
    LbSnapshot s;
    for (const Service& service : services_) {
      LbSnapshot::Service& saved = s.services.emplace_back();
      const ServiceConfig& c = service.config();
      saved = {c.name, c.vip, c.port, c.protocol, {}};
      for (const Backend& b : service.backends()) {
        saved.backends.push_back({b.config.name, b.config.address, b.config.port, b.config.weight, b.removed, b.total_connections,
                                  b.smooth_weight});
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
        backends.push_back({.config = {b.name, b.address, b.port, b.weight}, .removed = b.removed,
                            .total_connections = b.total_connections, .smooth_weight = b.smooth_weight});
      }
      if (const auto problem = services_[i].restore_backends(std::move(backends))) refuse("service " + c.name + ": " + *problem);
    }
    for (const LbSnapshot::Connection& saved : s.connections) {
      if (saved.service >= services_.size() || saved.backend >= services_[saved.service].backends().size()) {
        refuse("a connection names no backend");
      }
      Service& svc = services_[saved.service];
      const SavedConnection<FlowKeyV4>& c = saved.connection;
      if (service_of(c.original) != saved.service || !(c.reply == reply_of(c.original, svc.backends()[saved.backend].config))) {
        refuse("a connection that does not go to the backend it names");
      }
      const CreateResult created = tracker_.restore(c, flow_hash(c.original), flow_hash(c.reply), now);
      if (created.status != CreateStatus::created) {
        refuse(created.status == CreateStatus::full ? "more connections than max_connections" : "a connection's tuple twice");
      }
      tracker_.payload(created.match.conn) = {saved.service, saved.backend};
      ++svc.backends()[saved.backend].connections;
    }
  }

  std::vector<Service>& services() { return services_; }
  const std::vector<Service>& services() const { return services_; }
  const ConnTracker<Table, LbAssignment, Aging>& tracker() const { return tracker_; }
  const NfCounters& counters() const { return counters_; }
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
      const std::uint32_t backend = config_.policy == LbPolicy::maglev ? services_[service].consistent_choice(burst[i].hash)
                                                                       : Service::kNoBackend;
      if (backend == Service::kNoBackend) {
        tracker_.prefetch_create(nth++);
      } else {
        tracker_.prefetch_create(nth++, flow_hash(reply_of(key, services_[service].backends()[backend].config)));
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
    if (schedule_.due(packet.time)) {
      schedule_.advance(packet.time, config_.changes, [&](const PoolChange& change) { apply_pool_change(change, services_); });
    }
    if (!matches_.looked_up(i)) return {.verdict = counters_.pass()};
    ConnMatch match = matches_.match(tracker_, i, packet);
    if (match && begins_anew(match, packet.parsed)) {
      end_connection(match.conn);
      match = {};
    }
    if (!match) {
      const Opening opening = open(packet, packet.hash, packet.time);
      if (!opening.match) return {.verdict = opening.verdict};
      match = opening.match;
    }
    tracker_.update(match, packet.parsed, packet.wire_length, packet.time);
    const LbAssignment a = tracker_.payload(match.conn);
    const Service& svc = services_[a.service];
    if (match.direction == Direction::original) {
      const BackendConfig& b = svc.backends()[a.backend].config;
      return {.rewrites = true, .to_backend = true, .address = b.address, .port = b.port};
    }
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

  // A connection's end, by expiry or early: its backend has one live connection fewer.
  void release_backend(const LbAssignment& a) { --services_[a.service].backends()[a.backend].connections; }

  void end_connection(ConnId conn) {
    release_backend(tracker_.payload(conn));
    tracker_.destroy(conn);
    ++counters_.connections_expired;  // its end, early: created and expired still balance
  }

  Verdict rewrite(NfPacket& packet, const Plan& plan) { return apply_lb_plan(packet, plan) ? counters_.rewrite() : plan.verdict; }

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
      if (config_.stateless_when_full && restore_untracked_reply(packet)) return {{}, counters_.rewrite()};
      return {{}, counters_.pass()};
    }
    const bool lost_state = key.protocol == ipproto::kTcp && (p.tcp_flags & tcpflag::kSyn) == 0;
    if (lost_state && config_.non_syn_first == NonSynFirst::drop) return {{}, counters_.drop(NfDrop::non_syn_first)};
    Service& svc = services_[service];
    const bool consistent = lost_state && config_.non_syn_first == NonSynFirst::consistent;
    const std::uint32_t backend = svc.choose(consistent ? LbPolicy::maglev : config_.policy, hash, rng_);
    if (backend == Service::kNoBackend) return {{}, counters_.drop(NfDrop::no_backend)};
    const FlowKeyV4 reply = reply_of(key, svc.backends()[backend].config);
    const CreateResult created = tracker_.create(key, hash, reply, flow_hash(reply), key.protocol, now);
    if (created.status == CreateStatus::full) {
      if (!config_.stateless_when_full) return {{}, counters_.drop(NfDrop::table_full)};
      const std::uint32_t fallback = svc.choose(LbPolicy::maglev, hash, rng_);
      if (fallback == Service::kNoBackend) return {{}, counters_.drop(NfDrop::no_backend)};
      to_backend(packet, svc.backends()[fallback].config);
      return {{}, counters_.rewrite()};
    }
    if (created.status == CreateStatus::reply_taken) return {{}, counters_.drop(NfDrop::tuple_conflict)};
    if (created.status == CreateStatus::created) {
      tracker_.payload(created.match.conn) = {service, backend};
      Backend& chosen = svc.backends()[backend];
      ++chosen.connections;
      ++chosen.total_connections;
      ++counters_.connections_created;
    }
    return {created.match, Verdict::forward};
  }

  std::uint32_t service_of(const FlowKeyV4& key) const {
    const auto it = service_index_.find(endpoint_key(key.dst_addr, key.dst_port, key.protocol));
    return it == service_index_.end() ? kNoService : it->second;
  }

  // A packet of no connection from a backend's endpoint: the reply of a connection forwarded without
  // state (stateless_when_full), or of one whose state ended. It gets the VIP and port of the first
  // service listing that endpoint, as in the stateless LB: right when no backend endpoint serves two
  // services. A scan of the pool, only made when stateless_when_full is set.
  bool restore_untracked_reply(NfPacket& packet) {
    const FlowKeyV4& key = packet.parsed.key4;
    for (const Service& s : services_) {
      if (s.config().protocol != key.protocol) continue;
      for (const Backend& b : s.backends()) {
        const std::uint16_t port = b.config.port != 0 ? b.config.port : s.config().port;
        if (b.config.address != key.src_addr || port != key.src_port) continue;
        rewrite_ipv4_src(packet.frame, packet.parsed, s.config().vip);
        rewrite_src_port(packet.frame, packet.parsed, s.config().port);
        return true;
      }
    }
    return false;
  }

  void to_backend(NfPacket& packet, const BackendConfig& b) {
    rewrite_ipv4_dst(packet.frame, packet.parsed, b.address);
    if (b.port != 0) rewrite_dst_port(packet.frame, packet.parsed, b.port);
  }


  StatefulLbConfig config_;
  ConnTracker<Table, LbAssignment, Aging> tracker_;
  std::vector<Service> services_;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> service_index_;  // endpoint_key(vip, port, protocol) -> service
  Random rng_;
  NfCounters counters_;
  BurstMatches<ConnTracker<Table, LbAssignment, Aging>> matches_;  // of the burst in process_burst()
  std::array<Plan, kMaxBurst> plans_;
  PoolChangeClock schedule_;
};

}  // namespace flowtrack
