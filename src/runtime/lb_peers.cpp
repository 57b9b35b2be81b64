#include "flowtrack/runtime/lb_peers.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "flowtrack/runtime/dpdk_ports.hpp"
#include "flowtrack/runtime/every_worker.hpp"
#include "flowtrack/runtime/state_store.hpp"

namespace flowtrack {
namespace {

// How long the link's thread sleeps in poll() at most between two looks at its rings and timers: a
// small part of the 50 ms a record may wait.
constexpr Nanos kPeerLinkWait = 5 * kNanosPerMilli;

SyncTimers peer_timers(const LbPeersConfig& config) {
  SyncTimers t;
  t.heartbeat = config.dead_interval / 4;
  t.dead_after = config.dead_interval;
  return t;
}

}  // namespace

LbPeerSync::LbPeerSync(const LbPeersConfig& config, const SyncKey& key, unsigned workers)
    : config_(config),
      installed_(config.max_exceptions),
      link_(key, static_cast<std::uint64_t>(unix_now_ns()), config.peers.size(), installed_, peer_timers(config)),
      lbs_(workers, nullptr),
      listed_(workers) {
  for (const DataplaneListen& peer : config.peers) sockets_.push_back(std::make_unique<SyncSocket>(config.local, peer, true));
  for (unsigned w = 0; w < workers; ++w) sinks_.push_back(std::make_unique<RingSink>(kEventRing));
}

void LbPeerSync::attach(unsigned w, LiveLb& lb) {
  lb.share_exceptions(sinks_[w].get(), &installed_);
  lbs_[w] = &lb;
}

void LbPeerSync::detach(unsigned /*w*/) {
  while (!finished_.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::uint64_t LbPeerSync::lost_events() const {
  std::uint64_t lost = 0;
  for (const auto& sink : sinks_) lost += sink->lost();
  return lost;
}

void LbPeerSync::drain_events() {
  std::vector<LbExceptionEvent> events(1024);
  for (const auto& sink : sinks_) {
    for (std::size_t n; (n = sink->ring().pop(events)) != 0;) {
      for (std::size_t i = 0; i < n; ++i) link_.queue(events[i]);
      events_queued_ += n;
    }
  }
}

std::optional<std::vector<LbExceptionEvent>> LbPeerSync::list_exceptions(Engine& engine, const std::atomic<bool>& stop) {
  const auto workers = static_cast<unsigned>(lbs_.size());
  // Each worker lists them between two bursts, or at its next tick.
  const auto list_on = [&](unsigned w) {
    return WorkerTask{[lb = lbs_[w], &listed = listed_[w]] { listed = lb->exception_events(); }};
  };
  if (!run_on_every_worker(engine, workers, list_on, stop)) return std::nullopt;
  std::vector<LbExceptionEvent> all;
  for (std::vector<LbExceptionEvent>& listed : listed_) {
    all.insert(all.end(), listed.begin(), listed.end());
    listed = {};
  }
  return all;
}

void LbPeerSync::run(Engine& engine, const std::atomic<bool>& stop) {
  // However it ends (an exception too), the workers may then let their balancers go (detach).
  struct Finished {
    std::atomic<bool>& flag;
    ~Finished() { flag.store(true, std::memory_order_release); }
  } finished{finished_};
  Datagrams out;
  while (!stop.load(std::memory_order_relaxed) && !engine.stopping()) {
    for (std::size_t p = 0; p < sockets_.size(); ++p) {
      // The first socket waits for the thread's pause; the others are only looked at.
      sockets_[p]->receive(p == 0 ? kPeerLinkWait : 0, [&](std::span<const std::uint8_t> datagram) {
        link_.receive(p, datagram, DpdkPorts::now(), out);
      });
      sockets_[p]->send(out);
      out.clear();
    }
    const Nanos now = DpdkPorts::now();
    std::vector<std::size_t> due = link_.take_resync_requests(now);
    const std::uint64_t lost = lost_events();
    if (lost != lost_seen_) due = link_.streamed_to();  // an event lost: every peer streamed to gets the whole set
    lost_seen_ = lost;
    if (!due.empty()) {
      const auto all = list_exceptions(engine, stop);
      if (!all) break;
      for (const std::size_t p : due) link_.resynchronise(p, *all);
    }
    drain_events();
    for (std::size_t p = 0; p < sockets_.size(); ++p) {
      link_.poll(p, now, out);
      sockets_[p]->send(out);
      out.clear();
    }
  }
}

std::string LbPeerSync::summary() const {
  const SyncCounters c = link_.counters();
  std::string refused;
  for (std::size_t r = 1; r < kSyncRefusalCount; ++r) {
    refused += fmt::format("{}{} {}", refused.empty() ? "" : ", ", c.refused[r], sync_refusal_name(static_cast<SyncRefusal>(r)));
  }
  return fmt::format("peers: {} exception events told, {} lost; {} datagrams sent ({} resent), {} received, {} records applied "
                     "({}); {} of the peers' exceptions held, {} refused past the bound",
                     events_queued_, lost_events(), c.sent, c.retransmitted, c.received, c.records, refused, installed_.size(),
                     installed_.refused_full());
}

}  // namespace flowtrack
