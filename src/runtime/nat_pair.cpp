#include "flowtrack/runtime/nat_pair.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "flowtrack/nf/control_request.hpp"
#include "flowtrack/nf/nat_replica.hpp"
#include "flowtrack/nf/nat_sync_records.hpp"
#include "flowtrack/runtime/dpdk_ports.hpp"
#include "flowtrack/runtime/every_worker.hpp"
#include "flowtrack/runtime/state_store.hpp"

namespace flowtrack {
namespace {

// How long the link's thread sleeps in poll() at most between two looks at its rings and timers: a
// small part of the 50 ms a record may wait.
constexpr Nanos kSyncLinkWait = 5 * kNanosPerMilli;

std::string sync_endpoint_text(const DataplaneListen& l) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &l.address, text, sizeof text);
  return fmt::format("{}:{}", text, l.port);
}

sockaddr_in sync_socket_address(const DataplaneListen& l) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = l.address;
  a.sin_port = htons(l.port);
  return a;
}

// The link's own counters as the pair's figures, on top of `base` (what this NAT counted before).
LiveCounters::PairFigures pair_figures_of(const SyncCounters& c, LiveCounters::PairFigures base) {
  base.messages_sent += c.sent;
  base.messages_received += c.received;
  base.messages_acked += c.acknowledged;
  base.messages_resent += c.retransmitted;
  base.resyncs += c.resyncs;
  for (std::size_t r = 1; r < kSyncRefusalCount; ++r) {
    if (c.refused[r] != 0) base.refused[std::string(sync_refusal_name(static_cast<SyncRefusal>(r)))] += c.refused[r];
  }
  return base;
}

// The type of an authenticated datagram (nullopt: not one; the peer's link counts it when it reads it).
std::optional<SyncType> authenticated_sync_type(std::span<const std::uint8_t> datagram, const SyncKey& key, std::uint64_t& epoch) {
  const OpenedSyncMessage m = open_sync_message(datagram, key);
  if (m.refusal != SyncRefusal::none) return std::nullopt;
  epoch = m.header.epoch;
  return m.header.type;
}

}  // namespace

SyncTimers pair_timers(const PairConfig& config) {
  SyncTimers t;
  t.heartbeat = config.dead_interval / 4;
  t.dead_after = config.dead_interval;
  return t;
}

SyncSocket::SyncSocket(const DataplaneListen& local, const DataplaneListen& peer, bool connected) : peer_(sync_socket_address(peer)) {
  const auto failed = [&](const char* what) {
    const std::runtime_error error(fmt::format("pair sync link {}: {}: {}", sync_endpoint_text(local), what, std::strerror(errno)));
    if (fd_ >= 0) ::close(fd_);
    return error;
  };
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw failed("socket");
  const int on = 1;
  if (::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) throw failed("setsockopt");
  const sockaddr_in where = sync_socket_address(local);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&where), sizeof where) != 0) throw failed("bind");
  if (connected && ::connect(fd_, reinterpret_cast<const sockaddr*>(&peer_), sizeof peer_) != 0) throw failed("connect");
}

SyncSocket::~SyncSocket() { ::close(fd_); }

void SyncSocket::send(const Datagrams& datagrams) {
  for (const std::vector<std::uint8_t>& d : datagrams) {
    // Lost when the kernel does not take it (EAGAIN, ECONNREFUSED from an earlier one, no route).
    (void)::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&peer_), sizeof peer_);
  }
}

void SyncSocket::receive(Nanos wait, const std::function<void(std::span<const std::uint8_t>)>& take) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait / kNanosPerMilli)) <= 0) return;
  // One more byte than a datagram may have: a longer one arrives cut, and is refused as malformed.
  std::uint8_t buffer[kSyncMaxDatagram + 1];
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR || errno == ECONNREFUSED) continue;  // ECONNREFUSED: an earlier send found no one
      return;                                                 // EAGAIN: nothing more waiting
    }
    take(std::span<const std::uint8_t>(buffer, std::min(static_cast<std::size_t>(n), sizeof buffer)));
  }
}

std::optional<Takeover> stand_by(const PairConfig& config, const SyncKey& key, unsigned workers, Nanos quarantine, SyncSocket& socket,
                                 ControlSocket* control, CounterBoard& published, PairBoard& board, const std::atomic<bool>& stop) {
  NatReplica replica(workers, quarantine);
  NatSyncStandby standby(key, static_cast<std::uint64_t>(unix_now_ns()), replica, pair_timers(config));
  LiveCounters::PairFigures figures;
  figures.role = "standby";
  const auto publish = [&] {
    figures = pair_figures_of(standby.counters(), {.role = "standby"});
    figures.events_applied = standby.counters().records;
    board.publish(figures);
    LiveCounters counters;
    counters.nf = "nat";
    counters.pair = figures;
    published.publish(counters);
  };
  const Nanos start = DpdkPorts::now();
  std::string reason;
  const auto answer = [&](std::string_view line) -> std::string {
    const auto parsed = parse_control_request(line);
    if (const auto* error = std::get_if<std::string>(&parsed)) return "error: " + *error;
    switch (std::get<ControlRequest>(parsed).kind) {
      case ControlRequest::Kind::counters:
        publish();
        return live_counters_json(published.read());
      case ControlRequest::Kind::takeover:
        if (config.sync && standby.active_alive(DpdkPorts::now()) && !standby.synchronised()) {
          return "error: the active is alive and this standby's copy is not synchronised yet: a takeover now would break "
                 "the connections it lacks (again once the resynchronisation has ended, or stop the active first)";
        }
        reason = "ctl takeover";
        return "ok: taking over";
      case ControlRequest::Kind::change: return "error: nf nat has no backend pool to change (slb, lb and concury have)";
      case ControlRequest::Kind::save_state:
      case ControlRequest::Kind::hand_over:
      case ControlRequest::Kind::hand_over_commit:
      case ControlRequest::Kind::hand_over_abort: return "error: a NAT pair's standby keeps no state file (its copy is the active's)";
      case ControlRequest::Kind::drain_instance:
      case ControlRequest::Kind::undrain_instance: return "error: nf nat announces no VIPs (slb, lb and concury do)";
      case ControlRequest::Kind::stop: return "error: a standby stops on SIGTERM or SIGINT";
    }
    return "error: an unknown request";
  };
  Datagrams out;
  Nanos next_publish = start;
  while (!stop.load(std::memory_order_relaxed)) {
    socket.receive(kSyncLinkWait, [&](std::span<const std::uint8_t> datagram) {
      std::uint64_t epoch = 0;
      const auto type = authenticated_sync_type(datagram, key, epoch);
      // A peer that stands by too (both starting) asks for what this one does not have: nothing to do.
      if (type == SyncType::hello || type == SyncType::ack) return;
      standby.receive(datagram, DpdkPorts::now(), out);
    });
    const Nanos now = DpdkPorts::now();
    standby.poll(now, out);
    socket.send(out);
    out.clear();
    if (control != nullptr) control->serve(std::chrono::milliseconds(0), answer);
    if (now >= next_publish) {
      publish();
      next_publish = now + 100 * kNanosPerMilli;
    }
    if (reason.empty() && standby.ever_heard() && !standby.active_alive(now)) {
      reason = fmt::format("the active went silent for {} ms", config.dead_interval / kNanosPerMilli);
    }
    if (reason.empty() && !standby.ever_heard() && config.role == PairConfig::Role::active && now - start >= config.dead_interval) {
      reason = fmt::format("no active answered within {} ms of the start", config.dead_interval / kNanosPerMilli);
    }
    if (!reason.empty()) break;
  }
  if (reason.empty()) return std::nullopt;
  Takeover t;
  t.decided = DpdkPorts::now();
  publish();
  const Nanos now = DpdkPorts::now();
  for (unsigned w = 0; w < workers; ++w) t.workers.push_back(replica.snapshot(w, now));
  t.sessions = replica.sessions();
  t.reason = standby.synchronised() ? reason : reason + " (its copy was not synchronised: connections it lacks break)";
  t.figures = figures;
  t.figures.takeovers += 1;
  return t;
}

ActiveSyncLink::ActiveSyncLink(const PairConfig& config, const SyncKey& key, SyncSocket& socket, unsigned workers, PairBoard& board,
                               LiveCounters::PairFigures base)
    : config_(config),
      key_(key),
      socket_(socket),
      // Later than the epoch it had as a standby (its start), and than any the peer has seen of it.
      epoch_(static_cast<std::uint64_t>(unix_now_ns())),
      active_(key, epoch_, pair_timers(config)),
      board_(board),
      base_(std::move(base)),
      nats_(workers, nullptr),
      consumed_(workers, 0),
      taken_(workers) {
  base_.role = "active";
  if (!config.sync) return;
  for (unsigned w = 0; w < workers; ++w) rings_.push_back(std::make_unique<SpscRingOf<NatEvent>>(kEventRing));
}

void ActiveSyncLink::attach(unsigned w, LivePairedNat& nat) {
  if (!config_.sync) return;
  nat.events().attach(rings_[w].get());
  nats_[w] = &nat;
}

std::uint64_t ActiveSyncLink::lost_events() const {
  std::uint64_t lost = 0;
  for (const LivePairedNat* nat : nats_) lost += nat != nullptr ? nat->events().lost() : 0;
  return lost;
}

void ActiveSyncLink::drain_events() {
  std::vector<NatEvent> events(1024);
  for (std::size_t w = 0; w < rings_.size(); ++w) {
    for (std::size_t n; (n = rings_[w]->pop(events)) != 0;) {
      consumed_[w] += n;
      if (!streaming_) continue;
      for (std::size_t i = 0; i < n; ++i) active_.queue(sync_record_of(events[i], static_cast<std::uint8_t>(w)));
      events_sent_ += n;
    }
  }
}

bool ActiveSyncLink::resynchronise(Engine& engine, const std::atomic<bool>& stop) {
  const auto workers = static_cast<unsigned>(rings_.size());
  active_.begin_resync(static_cast<std::uint8_t>(workers));
  // Each worker takes it between two bursts, or at its next tick.
  const auto snapshot_on = [&](unsigned w) {
    return WorkerTask{[nat = nats_[w], &taken = taken_[w]] {
      taken.snapshot = nat->snapshot(DpdkPorts::now());
      taken.pushed = nat->events().pushed();
    }};
  };
  if (!run_on_every_worker(engine, workers, snapshot_on, stop)) return false;
  std::vector<NatEvent> skipped(1024);
  std::vector<SyncRecord> records;
  for (unsigned w = 0; w < workers; ++w) {
    // The events the snapshot holds already: before it in the ring.
    while (consumed_[w] < taken_[w].pushed) {
      const std::size_t n = rings_[w]->pop(std::span(skipped).first(std::min<std::size_t>(skipped.size(), taken_[w].pushed - consumed_[w])));
      if (n == 0) break;  // cannot be: the worker pushed them before its snapshot
      consumed_[w] += n;
    }
    records.clear();
    append_state_records(taken_[w].snapshot, static_cast<std::uint8_t>(w), records);
    for (const SyncRecord& r : records) active_.queue(r);
    events_sent_ += records.size();
    taken_[w].snapshot = {};
  }
  active_.queue(SyncResyncEnd{});
  return true;
}

void ActiveSyncLink::publish() {
  LiveCounters::PairFigures f = pair_figures_of(active_.counters(), base_);
  f.events_sent += events_sent_;
  f.events_lost += lost_events();
  board_.publish(f);
}

void ActiveSyncLink::detach(unsigned /*w*/) {
  while (!finished_.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ActiveSyncLink::run(Engine& engine, const std::atomic<bool>& stop) {
  // However it ends (an exception too), the workers may then let their NATs go (detach).
  struct Finished {
    std::atomic<bool>& flag;
    ~Finished() { flag.store(true, std::memory_order_release); }
  } finished{finished_};
  Datagrams out;
  Nanos next_publish = 0;
  while (!stop.load(std::memory_order_relaxed) && !engine.stopping()) {
    socket_.receive(kSyncLinkWait, [&](std::span<const std::uint8_t> datagram) {
      std::uint64_t epoch = 0;
      const auto type = authenticated_sync_type(datagram, key_, epoch);
      if ((type == SyncType::heartbeat || type == SyncType::data) && epoch > epoch_) {
        stepped_down_ = "the peer took over after this NAT became active: this one steps down (started again, it stands by)";
        return;
      }
      active_.receive(datagram, DpdkPorts::now());
    });
    if (!stepped_down_.empty()) {
      engine.stop();
      break;
    }
    const Nanos now = DpdkPorts::now();
    if (config_.sync) {
      const std::uint64_t lost = lost_events();
      if (active_.take_resync_request() || lost != lost_seen_) {
        // A standby heard lately gets the whole state; with none, nothing is queued until its hello.
        streaming_ = active_.standby_heard_within(now, config_.dead_interval);
        if (streaming_ && !resynchronise(engine, stop)) break;
      }
      lost_seen_ = lost;
      drain_events();
    }
    active_.poll(now, out);
    socket_.send(out);
    out.clear();
    if (now >= next_publish) {
      publish();
      next_publish = now + 100 * kNanosPerMilli;
    }
  }
  publish();
}

}  // namespace flowtrack
