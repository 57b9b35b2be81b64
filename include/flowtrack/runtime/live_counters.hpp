// What a live data plane has counted at a moment (runtime/live_service.hpp), in the shape every reader
// shares: `flowtrack ctl counters`, DPDK telemetry (runtime/telemetry_counters.hpp), Prometheus text
// (runtime/prometheus_text.hpp), the stats line and the final report. Drops are keyed by reason, the
// names of ParseStatus, NfDrop and PortDrop; a reason appears once it has counted one.
//
// CounterBoard: where the control plane leaves the workers' sum for threads that must not touch a
// worker (DPDK's telemetry thread, the metrics listener). The workers' counters stay plain, single
// writer; the board's lock is taken a few times a second, never per packet.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/nf/lb_stats.hpp"

namespace flowtrack {

struct LiveCounters {
  std::string nf;                              // the function's name: fwd, slb, lb, nat
  std::uint64_t packets_in = 0;                // frames received on every port, ARP included
  std::uint64_t packets_to_function = 0;       // IPv4 frames handed to the function
  std::uint64_t packets_out = 0;               // frames sent on every port, ARP included
  std::map<std::string, std::uint64_t> drops;  // by reason
  std::uint64_t connections = 0;               // created since the start
  std::uint64_t connections_live = 0;
  std::uint64_t arp_answered = 0, arp_asked = 0;
  std::uint64_t handed_off = 0;                // IPv4 frames one worker handed to their owner
  std::uint64_t handoff_backoffs = 0;          // times a worker waited for room in an owner's hand-off ring
  std::uint64_t over_rate = 0;  // lb: first packets forwarded without state, above new_connection_rate
  std::map<std::string, std::uint64_t> backends;  // lb: connections sent to each backend since the start
  // lb: each backend's live connections by phase (opening, established, closing: conntrack/tcp_state.hpp),
  // so that a drained backend's TIME_WAIT connections are not taken for transfers still under way.
  std::map<std::string, std::array<std::uint64_t, kConnectionPhaseCount>> backend_connections;
  // The health checks' view (the control plane's, not the workers': runtime/health_checker.hpp), by
  // "service/backend": up or down, probes, failed probes, transitions; and by service, the times every
  // backend of it was down at once.
  struct BackendHealth {
    bool up = true;
    std::uint64_t probes = 0, failures = 0, transitions = 0;
  };
  std::map<std::string, BackendHealth> backend_health;
  std::map<std::string, std::uint64_t> all_down_events;
  // The load balancers' (slb, lb, concury): per virtual service ("VIP:port/protocol") and per backend,
  // packets and bytes to the backends and back through the balancer, connections given since the start
  // and live now (nf/lb_stats.hpp); and, the control plane's, the new connections a second over its
  // last full second (vip_rate, backend_rate: by the same names).
  LbStats traffic;
  std::map<std::string, std::uint64_t> vip_rate, backend_rate;
  // A NAT pair's sync link (the control plane's: runtime/nat_pair.hpp); role empty: no pair. Messages
  // are the link's datagrams; refused ones by reason (malformed, forged, replayed), never applied.
  struct PairFigures {
    std::string role;  // "active" | "standby"
    std::uint64_t messages_sent = 0, messages_received = 0, messages_acked = 0, messages_resent = 0;
    std::uint64_t events_sent = 0, events_applied = 0, events_lost = 0;
    std::uint64_t resyncs = 0, takeovers = 0;
    std::map<std::string, std::uint64_t> refused;
    bool operator==(const PairFigures&) const = default;
    // The counts above by name (role and refusals aside), in one order for every reader.
    std::array<std::pair<std::string_view, std::uint64_t>, 9> counts() const {
      return {{{"messages_sent", messages_sent},
               {"messages_received", messages_received},
               {"messages_acked", messages_acked},
               {"messages_resent", messages_resent},
               {"events_sent", events_sent},
               {"events_applied", events_applied},
               {"events_lost", events_lost},
               {"resyncs", resyncs},
               {"takeovers", takeovers}}};
    }
  };
  PairFigures pair;

  // Adds another worker's counters (the health checks' view, the rates and the pair's figures stay; so
  // does the name, unless it is empty: a sum starts empty).
  LiveCounters& operator+=(const LiveCounters& other);
};

// The counters as one JSON object: what `flowtrack ctl counters` answers, and a live report starts from.
std::string live_counters_json(const LiveCounters& counters);

// One LiveCounters behind a lock: the process-wide board the scrapers read (live_counter_board()), and
// the copy each worker leaves for the control plane.
class CounterBoard {
 public:
  void publish(const LiveCounters& counters) {
    const std::lock_guard lock(mutex_);
    latest_ = counters;
  }
  LiveCounters read() const {
    const std::lock_guard lock(mutex_);
    return latest_;
  }

 private:
  mutable std::mutex mutex_;
  LiveCounters latest_;
};

}  // namespace flowtrack
