#include "flowtrack/nf/concury_lb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "flowtrack/hash/seeded_hash.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {

namespace {

// A service's control plane starts sized for its share of max_connections within these bounds: the
// upper one because a rewrite refills the service's whole arrays (O(their size), not O(connections)).
constexpr std::size_t kMinExpectedPerService = 1024, kMaxExpectedPerService = 16384;

Nanos longest_timeout(const ConntrackTimeouts& t) {
  return std::max({*std::max_element(t.tcp.begin(), t.tcp.end()), t.udp_unreplied, t.udp_replied, t.icmp, t.other});
}

}  // namespace

ConcuryLb::ConcuryLb(const StatefulLbConfig& config)
    : changes_(config.changes), forget_after_(longest_timeout(config.timeouts)), control_(kDcodeBits, config.seed), lookup_(kDcodeBits) {
  sort_pool_changes(changes_);
  if (const auto problem = check_pool_changes(changes_, config.services, config.maglev_size)) {
    throw std::invalid_argument(fmt::format("concury: change {}: {}: {}", problem->index, problem->key, problem->problem));
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
    service_index_.emplace(endpoint_key(s.vip, s.port, s.protocol), index);
    services_.emplace_back(s, config.maglev_size);
    pool_of(index, backends, weights);
    control_.add_vip(backends, weights, expected);
    lookup_.add_vip(control_.image(index));
  }
  index_backends();
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
    const std::vector<Backend>& pool = services_[s].backends();
    for (std::size_t b = 0; b < pool.size(); ++b) {
      const std::uint16_t port = pool[b].config.port != 0 ? pool[b].config.port : c.port;
      backend_index_[endpoint_key(pool[b].config.address, port, c.protocol)].emplace_back(s, static_cast<std::uint16_t>(b));
    }
  }
}

std::uint32_t ConcuryLb::service_of(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const {
  const auto it = service_index_.find(endpoint_key(address, port, protocol));
  return it == service_index_.end() ? kNoService : it->second;
}

std::size_t ConcuryLb::known_connections() const {
  std::size_t n = 0;
  for (std::uint32_t s = 0; s < services_.size(); ++s) n += control_.connections(s);
  return n;
}

std::uint16_t ConcuryLb::backend_for(std::uint32_t service, std::uint32_t client_addr, std::uint16_t client_port) const {
  const std::uint64_t key = client_key(client_addr, client_port);
  return control_.dip_of(service, key).value_or(lookup_.lookup(service, key));
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

template <class Fn>
void ConcuryLb::control_plane_questions(const NfPacket& packet, std::size_t i, Fn&& fn) const {
  const ParsedPacket& p = packet.parsed;
  if (services_of_[i] != kNoService) {
    if (may_open(p)) fn(services_of_[i], client_key(p.key4.src_addr, p.key4.src_port));
    return;
  }
  if (listing_of_[i] == nullptr) return;
  const std::vector<ServiceBackend>& listing = *listing_of_[i];
  for (std::size_t k = 0; k < listing.size(); ++k) {
    if (answers_[first_query_[i] + k] == listing[k].second) fn(listing[k].first, client_key(p.key4.dst_addr, p.key4.dst_port));
  }
}

void ConcuryLb::prefetch_control_plane(std::span<const NfPacket> burst) const {
  for (std::size_t i = 0; i < burst.size(); ++i) {
    control_plane_questions(burst[i], i, [&](std::uint32_t service, std::uint64_t key) { control_.prefetch_cells(service, key); });
  }
  for (std::size_t i = 0; i < burst.size(); ++i) {
    control_plane_questions(burst[i], i, [&](std::uint32_t service, std::uint64_t key) { control_.prefetch_key(service, key); });
  }
}

compact::ConcuryLookup::Answer ConcuryLb::looked_up(std::size_t query) const { return {answer_dcodes_[query], answers_[query]}; }

LbPlan ConcuryLb::decide(NfPacket& packet, std::size_t i) {
  if (schedule_.due(packet.time)) {
    schedule_.advance(packet.time, changes_, [&](const PoolChange& change) { apply_change(change); });
  }
  const std::uint32_t service = services_of_[i];
  if (service == kNoService) return answer(packet, i);
  const ParsedPacket& p = packet.parsed;
  const std::uint64_t key = client_key(p.key4.src_addr, p.key4.src_port);
  const compact::ConcuryLookup::Answer arrays = generation_ == burst_generation_ ? looked_up(first_query_[i]) : lookup_.answer(service, key);
  std::uint16_t backend = arrays.dip;
  const bool opening = may_open(p);
  if (opening) backend = open(service, key, arrays, packet.time);
  if (backend == compact::ConcuryControl::kNoDip) return {.verdict = counters_.drop(NfDrop::no_backend)};
  if (audit_) audit(service, key, backend, opening);
  const BackendConfig& b = services_[service].backends()[backend].config;
  return {.rewrites = true, .to_backend = true, .address = b.address, .port = b.port};
}

std::uint16_t ConcuryLb::open(std::uint32_t service, std::uint64_t key, compact::ConcuryLookup::Answer arrays, Nanos now) {
  std::uint16_t backend = arrays.dip;
  if (backend == compact::ConcuryControl::kNoDip) return backend;
  Service& svc = services_[service];
  if (svc.backends()[backend].takes_new()) {
    // Learnt unless known already (a retransmitted SYN, a later UDP packet): the arrays give a known
    // connection the Dcode its control plane holds, so learning it again changes nothing.
    if (!control_.learn(service, key, arrays.dcode)) return backend;
  } else if (control_.dip_of(service, key)) {
    return backend;  // a known connection of a backend that takes no new ones
  } else {
    // A pin: the Dcode of a backend that only keeps its known connections. Another code of the row,
    // from a point the key chooses (so by weight), that takes new connections; none: no backend.
    const std::uint32_t codes = 1u << kDcodeBits;
    const auto start = static_cast<std::uint32_t>(seeded_hash(key, 0x0c0dec0de) % codes);
    std::uint32_t c = 0;
    while (c < codes) {
      const std::uint16_t other = control_.dip_at(service, (start + c) % codes);
      if (other != compact::ConcuryControl::kNoDip && svc.backends()[other].takes_new()) break;
      ++c;
    }
    if (c == codes) return compact::ConcuryControl::kNoDip;
    backend = control_.dip_at(service, (start + c) % codes);
    control_.keep(service, key, backend);
    publish(service);
    ++stats_.rehomed;
  }
  learnt(service, key, now);
  ++svc.backends()[backend].total_connections;
  return backend;
}

LbPlan ConcuryLb::answer(NfPacket& packet, std::size_t i) {
  const ParsedPacket& p = packet.parsed;
  if (p.ip_version != 4 || !p.has_ports) return {.verdict = counters_.pass()};
  // The lookup stage's listing and arrays' answers while no rewrite came since, else our own.
  const bool looked = generation_ == burst_generation_ && listing_of_[i] != nullptr;
  const std::vector<ServiceBackend>* found = looked ? listing_of_[i] : nullptr;
  if (found == nullptr) {
    const auto it = backend_index_.find(endpoint_key(p.key4.src_addr, p.key4.src_port, p.key4.protocol));
    if (it == backend_index_.end()) return {.verdict = counters_.pass()};
    found = &it->second;
  }
  const std::uint64_t key = client_key(p.key4.dst_addr, p.key4.dst_port);
  const std::vector<ServiceBackend>& listing = *found;
  // The service is the first listing one whose control plane knows the connection. The arrays of a
  // service always send a connection its control plane knows to that connection's backend, so the
  // arrays are asked first (compact, hot) and a control plane only where they send the client here.
  const ServiceBackend* sent_here = nullptr;
  std::uint32_t sent_here_dcode = 0;
  for (std::size_t k = 0; k < listing.size(); ++k) {
    const ServiceBackend& sb = listing[k];
    const compact::ConcuryLookup::Answer a = looked ? looked_up(first_query_[i] + k) : lookup_.answer(sb.first, key);
    if (a.dip != sb.second) continue;
    if (control_.dip_of(sb.first, key)) return restore_service(sb.first);
    if (sent_here == nullptr) {
      sent_here = &sb;
      sent_here_dcode = a.dcode;
    }
  }
  // The backend reports a connection no control plane has heard of (met mid-stream): the service
  // whose arrays send the client here learns it. When none does, a rewrite came between the
  // connection's packets: the first service listing the backend learns it there, and its arrays are
  // refilled so that the client's later packets go back to the backend that answers (a repair).
  ServiceBackend chosen = listing.front();
  if (sent_here != nullptr) {
    chosen = *sent_here;
    control_.learn(chosen.first, key, sent_here_dcode);
  } else {
    control_.keep(chosen.first, key, chosen.second);
    publish(chosen.first);
    ++stats_.repairs;
  }
  learnt(chosen.first, key, packet.time);
  return restore_service(chosen.first);
}

LbPlan ConcuryLb::restore_service(std::uint32_t service) const {
  const ServiceConfig& c = services_[service].config();
  return {.rewrites = true, .to_backend = false, .address = c.vip, .port = c.port};
}

void ConcuryLb::apply_change(const PoolChange& change) {
  apply_pool_change(change, services_);
  std::vector<std::uint16_t> backends;
  std::vector<double> weights;
  for (std::uint32_t s = 0; s < services_.size(); ++s) {
    if (services_[s].config().name != change.service) continue;
    pool_of(s, backends, weights);
    // Every backend ever listed stays in the list (a removed one with weight 0): no connection is lost.
    [[maybe_unused]] const std::size_t lost = control_.set_pool(s, backends, weights);
    FLOWTRACK_ASSERT(lost == 0, "a pool change keeps every known connection's backend");
    publish(s);
    ++stats_.rewrites;
  }
  index_backends();
  ++generation_;  // the listings the lookup stage kept are gone
}

void ConcuryLb::learnt(std::uint32_t service, std::uint64_t key, Nanos now) {
  learnt_.push_back({now, service, key});
  ++counters_.connections_created;
}

std::size_t ConcuryLb::expire(Nanos now, std::size_t budget) {
  std::size_t n = 0;
  // now - at, not at + forget_after_: the timeout may be large enough to overflow the sum.
  while (n < budget && !learnt_.empty() && now - learnt_.front().at >= forget_after_) {
    control_.forget(learnt_.front().service, learnt_.front().key);
    learnt_.pop_front();
    ++n;
  }
  counters_.connections_expired += n;
  return n;
}

void ConcuryLb::publish(std::uint32_t service) {
  const compact::ConcuryVipImage in_use = lookup_.image(service);
  lookup_.apply(service, control_.image(service, &in_use));
  ++generation_;
}

void ConcuryLb::audit(std::uint32_t service, std::uint64_t key, std::uint16_t backend, bool opening) {
  const auto [it, first] = first_backend_.try_emplace({service, key}, backend);
  const std::vector<Backend>& pool = services_[service].backends();
  if (!first && it->second != backend) ++stats_.violations;
  if (backend >= pool.size() || (first && opening && !pool[backend].takes_new())) ++stats_.false_hits;
}

}  // namespace flowtrack
