#include "flowtrack/nf/concury_lb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/conntrack/timeouts.hpp"
#include "flowtrack/hash/seeded_hash.hpp"
#include "flowtrack/sync/batch_thread.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {

namespace {

// A service's control plane starts sized for its share of max_connections within these bounds: the
// upper one because a rewrite refills the service's whole arrays (O(their size), not O(connections)).
constexpr std::size_t kMinExpectedPerService = 1024, kMaxExpectedPerService = 16384;
// Reports a control plane on a thread of its own may be behind by before the worker waits for it.
constexpr std::size_t kReportRing = 16384;

// How long the control plane keeps a connection (concury_learning.hpp): the longest timeout of the
// configuration from its last report, the longest of the TCP closing states' from its last FIN or RST
// once closed, the longer UDP timeout from a datagram flow's last datagram or answer.
ConcuryLearning::Lifetimes lifetimes(const ConntrackTimeouts& t) {
  return {.known = std::max({*std::max_element(t.tcp.begin(), t.tcp.end()), t.udp_unreplied, t.udp_replied, t.icmp, t.other}),
          .handshake = t.tcp_timeout(TcpState::syn_sent),
          .closing = std::max({t.tcp_timeout(TcpState::fin_wait), t.tcp_timeout(TcpState::close_wait),
                               t.tcp_timeout(TcpState::last_ack), t.tcp_timeout(TcpState::time_wait), t.tcp_timeout(TcpState::close)}),
          .datagram = std::max(t.udp_unreplied, t.udp_replied)};
}

}  // namespace

// Each name, address and port counts once: one added back where it was takes its entry again
// (backend_pool.hpp). Every backend a service ever listed keeps a Dcode while it holds known connections
// (a pin, taken from the longest range of the row), so the row's codes bound them: with no more backends
// than codes, the longest range has two codes or more whenever a pin is placed.
std::optional<std::pair<std::size_t, std::size_t>> ConcuryLb::listing_beyond(std::span<const PoolChange> changes,
                                                                             std::span<const ServiceConfig> services) {
  constexpr std::size_t most = std::size_t{1} << kDcodeBits;
  using Entry = std::tuple<std::string, std::uint32_t, std::uint16_t>;
  std::map<std::string, std::set<Entry>, std::less<>> listed;  // by service name: services of one name share it
  for (const ServiceConfig& s : services) {
    for (const BackendConfig& b : s.backends) listed[s.name].emplace(b.name, b.address, b.port);
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const PoolChange& c = changes[i];
    if (c.action != PoolAction::add) continue;
    std::set<Entry>& entries = listed[c.service];
    entries.emplace(c.backend.name, c.backend.address, c.backend.port);
    if (entries.size() > most) return std::pair{i, entries.size()};
  }
  return std::nullopt;
}

ConcuryLb::ConcuryLb(const StatefulLbConfig& config, ControlPlanePlace place)
    : learning_(std::make_unique<ConcuryLearning>(
          compact::ConcuryControl(kDcodeBits, config.seed, compact::layout_for(config.max_connections, kDcodeBits)),
          lifetimes(config.timeouts))),
      lookup_(kDcodeBits, compact::layout_for(config.max_connections, kDcodeBits)) {
  // Its Dcodes and weighted codes are its own instance's: no key makes another instance choose alike.
  if (config.deployment_key) throw std::invalid_argument("concury: a deployment key is the stateful LB's (lb) alone");
  for (const ServiceConfig& s : config.services) {
    if (s.backends.size() > std::size_t{1} << kDcodeBits) {
      throw std::invalid_argument(fmt::format("concury: service '{}' lists {} backends, at most {} (one Dcode each)", s.name,
                                              s.backends.size(), std::size_t{1} << kDcodeBits));
    }
  }
  if (config.services.size() >= ConcuryLearning::kMaxServices) {
    throw std::invalid_argument(fmt::format("concury: {} services, at most {}", config.services.size(), ConcuryLearning::kMaxServices - 1));
  }
  std::vector<std::uint16_t> backends;
  std::vector<double> weights;
  // Each service's control plane sized for its share of the configured connections (bounded), so that
  // learning them grows it seldom (a growth rebuilds the service's whole index: amortized O(1) a
  // connection, but all at once).
  const auto expected = static_cast<std::uint32_t>(std::clamp<std::size_t>(
      config.max_connections / std::max<std::size_t>(1, config.services.size()), kMinExpectedPerService, kMaxExpectedPerService));
  for (const ServiceConfig& s : config.services) {
    const auto index = static_cast<std::uint32_t>(services_.size());
    service_index_.add(s);
    append_service(services_, s, config.maglev_size);
    pool_of(index, backends, weights);
    learning_->control().add_vip(backends, weights, expected);
    lookup_.add_vip(learning_->control().image(index));
  }
  index_backends();
  if (place == ControlPlanePlace::own_thread) {
    thread_ = std::make_unique<BatchThread<ConcuryLearning::Report>>(
        kReportRing, [learning = learning_.get()](std::span<const ConcuryLearning::Report> reports) { learning->learn_all(reports); });
  }
}

ConcuryLb::ConcuryLb(ConcuryLb&&) noexcept = default;
ConcuryLb& ConcuryLb::operator=(ConcuryLb&&) noexcept = default;
ConcuryLb::~ConcuryLb() = default;

ControlPlanePlace ConcuryLb::control_plane_place() const {
  return thread_ ? ControlPlanePlace::own_thread : ControlPlanePlace::worker;
}

void ConcuryLb::report(const ConcuryLearning::Report& r) {
  if (staged_count_ == staged_.size()) hand_over_reports();  // a burst of answers several services claim
  staged_[staged_count_++] = r;
  note(r);
}

void ConcuryLb::kept(const ConcuryLearning::Report& r, bool fresh) {
  learning_->kept(r, fresh);
  note(r);
}

void ConcuryLb::note(const ConcuryLearning::Report& r) {
  if (first_report_ == kNever) first_report_ = r.at;
  if (ConcuryLearning::is_close(r.met) && first_close_ == kNever) first_close_ = r.at;
  if (r.met == Met::datagram && first_datagram_ == kNever) first_datagram_ = r.at;
  if (r.met == Met::syn && oldest_handshake_ == kNever) oldest_handshake_ = r.at;
}

void ConcuryLb::learn_here() {
  learning_->learn_all(std::span(staged_.data(), staged_count_));
  staged_count_ = 0;
}

void ConcuryLb::hand_over_reports() {
  if (!thread_) return learn_here();
  if (staged_count_ == 0) return;
  thread_->push(std::span(staged_.data(), staged_count_));
  staged_count_ = 0;
}

void ConcuryLb::settle() {
  ++stats_.syncs;
  // A thread that has caught up is not woken: the control plane is the worker's already, and the
  // worker learns the burst's reports so far itself, after all those handed over, as the thread would.
  if (thread_ && !thread_->idle()) {
    hand_over_reports();
    thread_->drain();
    return;
  }
  learn_here();
}

void ConcuryLb::pool_of(std::uint32_t service, std::vector<std::uint16_t>& backends, std::vector<double>& weights) const {
  backends.clear();
  weights.clear();
  const std::vector<Backend>& pool = services_[service].backends();
  for (std::size_t b = 0; b < pool.size(); ++b) {
    backends.push_back(static_cast<std::uint16_t>(b));
    weights.push_back(pool[b].takes_new() ? pool[b].config.weight : 0.0);
  }
}

void ConcuryLb::index_backends() {
  backend_index_.clear();
  for (std::uint32_t s = 0; s < services_.size(); ++s) {
    const ServiceConfig& c = services_[s].config();
    if (c.tunnel.tunnels()) continue;  // its backends answer the clients directly, never through here
    const std::vector<Backend>& pool = services_[s].backends();
    for (std::size_t b = 0; b < pool.size(); ++b) {
      const std::uint16_t port = pool[b].config.port != 0 ? pool[b].config.port : c.port;
      backend_index_[endpoint_key(pool[b].config.address, port, c.protocol)].emplace_back(s, static_cast<std::uint16_t>(b));
    }
  }
}

std::uint32_t ConcuryLb::service_of(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const {
  return service_index_.find(address, port, protocol);
}

// Between bursts no report is staged (process_burst hands them over), so these need only wait for the
// thread, which changes none of this function's own state.
NfCounters ConcuryLb::counters() const {
  FLOWTRACK_ASSERT(staged_count_ == 0, "asked between bursts");
  if (thread_) thread_->drain();
  NfCounters c = counters_;
  c.connections_created = learning_->learnt();
  c.connections_expired = learning_->forgotten();
  return c;
}

std::size_t ConcuryLb::known_connections() const {
  FLOWTRACK_ASSERT(staged_count_ == 0, "asked between bursts");
  if (thread_) thread_->drain();
  std::size_t n = 0;
  for (std::uint32_t s = 0; s < services_.size(); ++s) n += learning_->control().connections(s);
  return n;
}

std::size_t ConcuryLb::peak_connections() const {
  FLOWTRACK_ASSERT(staged_count_ == 0, "asked between bursts");
  if (thread_) thread_->drain();
  return learning_->peak_known();
}

std::uint64_t ConcuryLb::new_connections(std::uint32_t service, std::uint16_t backend) const {
  FLOWTRACK_ASSERT(staged_count_ == 0, "asked between bursts");
  if (thread_) thread_->drain();
  return learning_->new_connections(service, backend);
}

std::uint16_t ConcuryLb::backend_for(std::uint32_t service, std::uint32_t client_addr, std::uint16_t client_port) const {
  const std::uint64_t key = client_key(client_addr, client_port);
  const std::uint16_t arrays = lookup_.lookup(service, key);
  // The invariant that lets every path but the sync points ask the arrays alone. Checked where the
  // control plane is the worker's (a thread's may be learning right now).
  FLOWTRACK_ASSERT(thread_ || staged_count_ != 0 || learning_->control().dip_of(service, key).value_or(arrays) == arrays,
                   "the arrays send every connection the control plane knows to its backend");
  return arrays;
}

void ConcuryLb::lookup_burst(std::span<const NfPacket> burst) {
  FLOWTRACK_ASSERT(burst.size() <= kMaxBurst, "a burst holds at most kMaxBurst packets");
  std::size_t n = 0;
  for (std::size_t i = 0; i < burst.size(); ++i) {
    const ParsedPacket& p = burst[i].parsed;
    first_query_[i] = static_cast<std::uint16_t>(n);
    listing_of_[i] = nullptr;
    services_of_[i] = p.ip_version == 4 && p.has_ports ? service_of(p.key4.dst_addr, p.key4.dst_port, p.key4.protocol) : kNoService;
    if (services_of_[i] != kNoService) {
      queries_[n++] = {services_of_[i], client_key(p.key4.src_addr, p.key4.src_port)};
      continue;
    }
    // A backend's answer, perhaps: what the arrays of every service listing that backend give its
    // client, for answer() (which falls back to lookups of its own when the queries do not fit).
    if (p.ip_version != 4 || !p.has_ports) continue;
    const auto it = backend_index_.find(endpoint_key(p.key4.src_addr, p.key4.src_port, p.key4.protocol));
    if (it == backend_index_.end() || n + it->second.size() > queries_.size()) continue;
    listing_of_[i] = &it->second;
    for (const ServiceBackend& sb : it->second) queries_[n++] = {sb.first, client_key(p.key4.dst_addr, p.key4.dst_port)};
  }
  lookup_.lookup_bulk(std::span(queries_).first(n), std::span(answers_).first(n), std::span(answer_dcodes_).first(n));
  burst_generation_ = generation_;
}

bool ConcuryLb::may_open(const ParsedPacket& p) {
  return p.key4.protocol == ipproto::kUdp ||
         (p.key4.protocol == ipproto::kTcp && (p.tcp_flags & (tcpflag::kSyn | tcpflag::kAck)) == tcpflag::kSyn);
}

bool ConcuryLb::closes(const ParsedPacket& p) {
  return p.key4.protocol == ipproto::kTcp && (p.tcp_flags & (tcpflag::kFin | tcpflag::kRst)) != 0;
}

template <class Fn>
std::size_t ConcuryLb::control_plane_questions(const NfPacket& packet, std::size_t i, Fn&& fn) const {
  const ParsedPacket& p = packet.parsed;
  if (services_of_[i] != kNoService) {
    if (may_open(p)) fn(services_of_[i], client_key(p.key4.src_addr, p.key4.src_port));
    return 0;
  }
  if (listing_of_[i] == nullptr) return 0;
  const ServiceListing& listing = *listing_of_[i];
  std::size_t claims = 0;
  for (std::size_t k = 0; k < listing.size(); ++k) {
    if (answers_[first_query_[i] + k] != listing[k].second) continue;
    fn(listing[k].first, client_key(p.key4.dst_addr, p.key4.dst_port));
    ++claims;
  }
  return claims;
}

void ConcuryLb::prefetch_control_plane(std::span<const NfPacket> burst) const {
  if (thread_) {
    bool sync_ahead = false;
    for (std::size_t i = 0; i < burst.size() && !sync_ahead; ++i) {
      sync_ahead = control_plane_questions(burst[i], i, [](std::uint32_t, std::uint64_t) {}) > 1;
    }
    if (!sync_ahead || !thread_->idle()) return;
  }
  const compact::ConcuryControl& control = learning_->control();
  for (std::size_t i = 0; i < burst.size(); ++i) {
    control_plane_questions(burst[i], i, [&](std::uint32_t service, std::uint64_t key) { control.prefetch_cells(service, key); });
  }
  for (std::size_t i = 0; i < burst.size(); ++i) {
    control_plane_questions(burst[i], i, [&](std::uint32_t service, std::uint64_t key) { control.prefetch_key(service, key); });
  }
}

compact::ConcuryLookup::Answer ConcuryLb::looked_up(std::size_t query) const { return {answer_dcodes_[query], answers_[query]}; }

LbPlan ConcuryLb::decide(NfPacket& packet, std::size_t i) {
  const std::uint32_t service = services_of_[i];
  if (service == kNoService) {
    // From the clients' side only packets to a service go on (the boundary: stateful_lb.hpp).
    if (packet.arrival == PortRole::clients) return {.verdict = counters_.drop(NfDrop::not_to_service)};
    return answer(packet, i);
  }
  const ParsedPacket& p = packet.parsed;
  const std::uint64_t key = client_key(p.key4.src_addr, p.key4.src_port);
  const compact::ConcuryLookup::Answer arrays = generation_ == burst_generation_ ? looked_up(first_query_[i]) : lookup_.answer(service, key);
  std::uint16_t backend = arrays.dip;
  if (may_open(p)) {
    backend = open(service, key, arrays, p.key4.protocol == ipproto::kUdp ? Met::datagram : Met::syn, packet.time);
  } else if (closes(p) && backend != compact::ConcuryControl::kNoDip) {
    report({{.key = key, .vip = service, .dcode = arrays.dcode}, packet.time, backend, close_met(p, Met::client_fin)});
  }
  if (backend == compact::ConcuryControl::kNoDip) return {.verdict = counters_.drop(NfDrop::no_backend)};
  Service& svc = services_[service];
  if (reaches_backend(packet, svc.config().tunnel)) svc.backends()[backend].count(Direction::original, packet.wire_length);
  return plan_to_backend(packet, svc.backends()[backend].config, svc.config().tunnel);
}

std::uint16_t ConcuryLb::open(std::uint32_t service, std::uint64_t key, compact::ConcuryLookup::Answer arrays, Met met, Nanos now) {
  const std::uint16_t backend = arrays.dip;
  if (backend == compact::ConcuryControl::kNoDip) return backend;
  if (!services_[service].backends()[backend].takes_new()) return open_on_pin(service, key, backend, met, now);
  // Learnt unless known already. The arrays give a known connection the Dcode its control plane holds,
  // so a later datagram of its flow, its retransmitted SYN, or a SYN opening a new connection on its
  // endpoints goes to the backend it had, which takes new connections.
  report({{.key = key, .vip = service, .dcode = arrays.dcode}, now, backend, met});
  return backend;
}

std::uint16_t ConcuryLb::open_on_pin(std::uint32_t service, std::uint64_t key, std::uint16_t pin, Met met, Nanos now) {
  settle();
  compact::ConcuryControl& control = learning_->control();
  const bool known = control.dip_of(service, key).has_value();
  // The known connection of a backend that takes no new ones: a later datagram of its flow, its
  // retransmitted SYN. A SYN of any other known connection opens a new one (concury_learning.hpp).
  if (known && (met == Met::datagram || learning_->half_open(service, key, now))) return pin;
  // A pin: the Dcode of a backend that only keeps its known connections. Another code of the row, from
  // a point the key chooses (so by weight), that takes new connections; none: no backend.
  const Service& svc = services_[service];
  const std::uint32_t codes = 1u << kDcodeBits;
  const auto start = static_cast<std::uint32_t>(seeded_hash(key, 0x0c0dec0de) % codes);
  std::uint32_t c = 0;
  while (c < codes) {
    const std::uint16_t other = control.dip_at(service, (start + c) % codes);
    if (other != compact::ConcuryControl::kNoDip && svc.backends()[other].takes_new()) break;
    ++c;
  }
  if (c == codes) return compact::ConcuryControl::kNoDip;
  const std::uint32_t dcode = (start + c) % codes;
  const std::uint16_t backend = control.dip_at(service, dcode);
  const bool row_changed = control.keep(service, key, backend);
  kept({{.key = key, .vip = service, .dcode = dcode}, now, backend, met}, !known);
  publish_kept(service, key, row_changed);
  ++stats_.rehomed;
  return backend;
}

LbPlan ConcuryLb::answer(NfPacket& packet, std::size_t i) {
  const ParsedPacket& p = packet.parsed;
  if (p.ip_version != 4 || !p.has_ports) return {.verdict = counters_.pass()};
  // The lookup stage's listing and arrays' answers while no rewrite came since, else our own.
  const bool looked = generation_ == burst_generation_ && listing_of_[i] != nullptr;
  const ServiceListing* found = looked ? listing_of_[i] : nullptr;
  if (found == nullptr) {
    const auto it = backend_index_.find(endpoint_key(p.key4.src_addr, p.key4.src_port, p.key4.protocol));
    if (it == backend_index_.end()) return {.verdict = counters_.pass()};
    found = &it->second;
  }
  const std::uint64_t key = client_key(p.key4.dst_addr, p.key4.dst_port);
  const ServiceListing& listing = *found;
  // The arrays of a service send every connection its control plane knows to that connection's
  // backend: when exactly one listing service's arrays send the client here, the connection is that
  // service's, known or to be learnt from this report.
  std::size_t sender = listing.size();
  std::uint32_t sender_dcode = 0;
  for (std::size_t k = 0; k < listing.size(); ++k) {
    const std::optional<std::uint32_t> dcode = claim(i, listing, k, key, looked);
    if (!dcode) continue;
    if (sender != listing.size()) return answer_at_sync(packet, i, listing, looked);  // a second one
    sender = k;
    sender_dcode = *dcode;
  }
  if (sender == listing.size()) return answer_at_sync(packet, i, listing, looked);
  report({{.key = key, .vip = listing[sender].first, .dcode = sender_dcode}, packet.time, listing[sender].second, answer_met(p)});
  return restore_service(listing[sender], packet.wire_length);
}

std::optional<std::uint32_t> ConcuryLb::claim(std::size_t i, const ServiceListing& listing, std::size_t k, std::uint64_t key,
                                               bool looked) const {
  const compact::ConcuryLookup::Answer a = looked ? looked_up(first_query_[i] + k) : lookup_.answer(listing[k].first, key);
  if (a.dip != listing[k].second) return std::nullopt;
  return a.dcode;
}

LbPlan ConcuryLb::answer_at_sync(const NfPacket& packet, std::size_t i, const ServiceListing& listing, bool looked) {
  settle();
  const compact::ConcuryControl& control = learning_->control();
  const ParsedPacket& p = packet.parsed;
  const std::uint64_t key = client_key(p.key4.dst_addr, p.key4.dst_port);
  claimed_.clear();
  for (std::size_t k = 0; k < listing.size(); ++k) {
    const std::optional<std::uint32_t> dcode = claim(i, listing, k, key, looked);
    if (!dcode) continue;
    if (control.dip_of(listing[k].first, key)) {
      report({{.key = key, .vip = listing[k].first, .dcode = *dcode}, packet.time, listing[k].second, answer_met(p)});  // it is answered
      return restore_service(listing[k], packet.wire_length);
    }
    claimed_.emplace_back(k, *dcode);
  }
  // Several services' arrays send the client here and none knows it (a connection met mid-stream):
  // which one it is cannot be told, so each of them learns it, and the connection's own service keeps
  // it through its next rewrite (the others hold an entry until it is forgotten). The answer gets the
  // first one's address.
  if (!claimed_.empty()) {
    for (const auto& [k, dcode] : claimed_) report({{.key = key, .vip = listing[k].first, .dcode = dcode}, packet.time, listing[k].second, answer_met(p)});
    return restore_service(listing[claimed_.front().first], packet.wire_length);
  }
  // None does: a rewrite came between the connection's packets (it was met mid-stream and not known
  // then). The first service listing the backend learns it there, and its arrays are refilled so that
  // the client's later packets go back to the backend that answers (a repair).
  const ServiceBackend& chosen = listing.front();
  const bool row_changed = learning_->control().keep(chosen.first, key, chosen.second);
  kept({{.key = key, .vip = chosen.first, .dcode = 0}, packet.time, chosen.second, answer_met(p)}, true);
  publish_kept(chosen.first, key, row_changed);
  ++stats_.repairs;
  return restore_service(chosen, packet.wire_length);
}

LbPlan ConcuryLb::restore_service(const ServiceBackend& answering, std::uint32_t wire_length) {
  services_[answering.first].backends()[answering.second].count(Direction::reply, wire_length);
  const ServiceConfig& c = services_[answering.first].config();
  return {.rewrites = true, .to_backend = false, .address = c.vip, .port = c.port};
}

void ConcuryLb::apply(const PoolChange& change) {
  settle();
  apply_change(change);
}

void ConcuryLb::apply_change(const PoolChange& change) {
  apply_pool_change(change, services_);
  std::vector<std::uint16_t> backends;
  std::vector<double> weights;
  for (std::uint32_t s = 0; s < services_.size(); ++s) {
    if (services_[s].config().name != change.service) continue;
    pool_of(s, backends, weights);
    // Every backend ever listed stays in the list (a removed one with weight 0): no connection is lost.
    [[maybe_unused]] const std::size_t lost = learning_->control().set_pool(s, backends, weights);
    FLOWTRACK_ASSERT(lost == 0, "a pool change keeps every known connection's backend");
    publish(s);
    ++stats_.rewrites;
  }
  index_backends();
  ++generation_;  // the listings the lookup stage kept are gone
}

std::size_t ConcuryLb::expire(Nanos now, std::size_t budget) {
  // A sync point, so both kinds of entries may wait. Ends are handled late, never early: once the
  // earliest is an eighth of the shorter of the closing and datagram timeouts overdue, every end due by
  // then goes (`budget` permitting), so a connection is forgotten at most that long after its end (an
  // end moved lazily by a later report: one of its timeouts longer at most, concury_learning.hpp), and this
  // is a sync point at most once that long (a sync every expire() call, when closes come steadily,
  // made the control plane's thread wait-bound: 0.17 Mpps where 2.1 without closes, 2026-11-27).
  // Half-open states end by the clock (ConcuryLearning::half_open): their entries are dropped once the
  // oldest is two timeouts old.
  const ConcuryLearning::Lifetimes& lifetimes = learning_->lifetimes();
  Nanos earliest = next_end_;
  if (first_report_ != kNever) earliest = std::min(earliest, ConcuryLearning::end_of(first_report_, lifetimes.known));
  if (first_close_ != kNever) earliest = std::min(earliest, ConcuryLearning::end_of(first_close_, lifetimes.closing));
  if (first_datagram_ != kNever) earliest = std::min(earliest, ConcuryLearning::end_of(first_datagram_, lifetimes.datagram));
  const bool ends_due = earliest != kNever && now >= earliest && now - earliest >= std::min(lifetimes.closing, lifetimes.datagram) / 8;
  const Nanos timeout = lifetimes.handshake;
  const bool handshakes_due = oldest_handshake_ != kNever && now - oldest_handshake_ >= timeout &&
                              now - oldest_handshake_ - timeout >= timeout;
  if (!ends_due && !handshakes_due) return 0;
  settle();
  const std::size_t n = learning_->expire(now, budget);
  next_end_ = learning_->next_end().value_or(kNever);
  first_report_ = first_close_ = first_datagram_ = kNever;
  oldest_handshake_ = learning_->oldest_handshake().value_or(kNever);
  return n;
}

void ConcuryLb::publish(std::uint32_t service) {
  const compact::ConcuryVipImage in_use = lookup_.image(service);
  lookup_.apply(service, learning_->control().image(service, &in_use));
  ++generation_;
}

void ConcuryLb::publish_kept(std::uint32_t service, std::uint64_t key, bool row_changed) {
  if (row_changed) return publish(service);
  lookup_.apply(service, learning_->control().image_after_keep(service, key, lookup_.image(service)));
  ++generation_;
}

}  // namespace flowtrack
