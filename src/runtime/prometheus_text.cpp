#include "flowtrack/runtime/prometheus_text.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <string_view>
#include <tuple>

namespace flowtrack {
namespace {

std::string prometheus_escaped(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void write_family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void write_single(std::string& out, std::string_view name, std::string_view type, std::string_view help, std::uint64_t value) {
  write_family(out, name, type, help);
  fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
}

void write_labelled(std::string& out, std::string_view name, std::string_view type, std::string_view help, std::string_view label,
              const std::map<std::string, std::uint64_t>& values) {
  write_family(out, name, type, help);
  for (const auto& [key, value] : values) fmt::format_to(std::back_inserter(out), "{}{{{}=\"{}\"}} {}\n", name, label, prometheus_escaped(key), value);
}

// A load balancer's figures per VIP or per backend (`what`), one family per figure labelled by `what`.
// A backend's connections given and live are flowtrack_backend_connections*'s already.
void write_traffic(std::string& out, std::string_view what, const std::map<std::string, LbTraffic>& figures,
                   const std::map<std::string, std::uint64_t>& rates) {
  if (figures.empty()) return;
  struct Figure {
    std::string_view name, type, help;
    std::uint64_t LbTraffic::*field;
  };
  const bool vip = what == "vip";
  for (const Figure& f : {Figure{"packets_total", "counter", "Packets to the backends.", &LbTraffic::packets},
                          Figure{"bytes_total", "counter", "Bytes (on the wire) to the backends.", &LbTraffic::bytes},
                          Figure{"reply_packets_total", "counter", "Answers from the backends through the balancer.",
                                 &LbTraffic::reply_packets},
                          Figure{"reply_bytes_total", "counter", "Bytes of the answers through the balancer.", &LbTraffic::reply_bytes},
                          Figure{"connections_total", "counter", "Connections given to a backend.", &LbTraffic::connections},
                          Figure{"connections", "gauge", "Connections live now.", &LbTraffic::connections_live}}) {
    if (!vip && (f.field == &LbTraffic::connections || f.field == &LbTraffic::connections_live)) continue;
    std::map<std::string, std::uint64_t> values;
    for (const auto& [name, t] : figures) values[name] = t.*f.field;
    write_labelled(out, fmt::format("flowtrack_{}_{}", what, f.name), f.type, fmt::format("{} By {}.", f.help, what), what, values);
  }
  std::map<std::string, std::uint64_t> per_second;
  for (const auto& [name, t] : figures) {
    const auto rate = rates.find(name);
    per_second[name] = rate == rates.end() ? 0 : rate->second;
  }
  write_labelled(out, fmt::format("flowtrack_{}_new_connections_per_second", what), "gauge",
                 fmt::format("New connections a second over the last second. By {}.", what), what, per_second);
}

// A NAT pair's figures, when it runs one.
void write_pair(std::string& out, const LiveCounters::PairFigures& p) {
  if (p.role.empty()) return;
  write_single(out, "flowtrack_pair_active", "gauge", "Whether this NAT is its pair's active (1) or its standby (0).", p.role == "active" ? 1 : 0);
  // By PairFigures::counts()'s order.
  static constexpr std::string_view kHelp[] = {"Sync link datagrams sent.",
                                               "Sync link datagrams received.",
                                               "Data messages the standby acknowledged.",
                                               "Data messages sent again, unacknowledged.",
                                               "State records queued for the standby.",
                                               "State records the standby applied to its copy.",
                                               "Session events a full ring lost (each costs a resynchronisation).",
                                               "Whole-state resynchronisations sent.",
                                               "Times this NAT took over as its pair's active."};
  static_assert(std::size(kHelp) == std::tuple_size_v<decltype(p.counts())>);
  std::size_t i = 0;
  for (const auto& [name, n] : p.counts()) write_single(out, fmt::format("flowtrack_pair_{}_total", name), "counter", kHelp[i++], n);
  write_labelled(out, "flowtrack_pair_refused_total", "counter", "Sync link datagrams refused, by reason.", "reason", p.refused);
}

}  // namespace

std::string prometheus_text(const LiveCounters& c) {
  std::string out;
  write_family(out, "flowtrack_info", "gauge", "The network function this data plane runs.");
  fmt::format_to(std::back_inserter(out), "flowtrack_info{{nf=\"{}\"}} 1\n", prometheus_escaped(c.nf));
  write_single(out, "flowtrack_packets_received_total", "counter", "Frames received on every port, ARP included.", c.packets_in);
  write_single(out, "flowtrack_packets_to_function_total", "counter", "IPv4 frames handed to the network function.",
         c.packets_to_function);
  write_single(out, "flowtrack_packets_sent_total", "counter", "Frames sent on every port, ARP included.", c.packets_out);
  write_labelled(out, "flowtrack_drops_total", "counter", "Packets dropped, by reason.", "reason", c.drops);
  write_single(out, "flowtrack_connections_total", "counter", "Connections created.", c.connections);
  write_single(out, "flowtrack_connections", "gauge", "Connections live now.", c.connections_live);
  write_single(out, "flowtrack_arp_replies_sent_total", "counter", "ARP requests answered for owned addresses.", c.arp_answered);
  write_single(out, "flowtrack_arp_requests_sent_total", "counter", "ARP requests sent: for next hops, and a NAT pair's takeover announcements.", c.arp_asked);
  write_single(out, "flowtrack_packets_handed_off_total", "counter", "IPv4 frames a worker handed to the worker that owns them.",
               c.handed_off);
  write_single(out, "flowtrack_handoff_backoffs_total", "counter",
               "Times a worker found the hand-off ring of a packet's owner full and waited for room.", c.handoff_backoffs);
  write_single(out, "flowtrack_over_rate_total", "counter",
               "First packets the stateful LB forwarded without state, above its new-connection rate.", c.over_rate);
  if (!c.backends.empty()) {
    write_labelled(out, "flowtrack_backend_connections_total", "counter", "Connections sent to each backend.", "backend",
             c.backends);
    write_family(out, "flowtrack_backend_connections", "gauge",
                 "Connections live on each backend now, by phase: opening (TCP handshake), established, closing (FIN, TIME_WAIT, RST).");
    for (const auto& [backend, phases] : c.backend_connections) {
      for (std::size_t p = 0; p < kConnectionPhaseCount; ++p) {
        fmt::format_to(std::back_inserter(out), "flowtrack_backend_connections{{backend=\"{}\",phase=\"{}\"}} {}\n",
                       prometheus_escaped(backend), connection_phase_name(static_cast<ConnectionPhase>(p)), phases[p]);
      }
    }
  }
  write_pair(out, c.pair);
  write_traffic(out, "vip", c.traffic.vips, c.vip_rate);
  write_traffic(out, "backend", c.traffic.backends, c.backend_rate);
  if (!c.backend_health.empty()) {
    std::map<std::string, std::uint64_t> up, probes, failures, transitions;
    for (const auto& [name, h] : c.backend_health) {
      up[name] = h.up ? 1 : 0;
      probes[name] = h.probes;
      failures[name] = h.failures;
      transitions[name] = h.transitions;
    }
    write_labelled(out, "flowtrack_backend_up", "gauge", "Whether the health checks have the backend up (1) or down (0).", "target", up);
    write_labelled(out, "flowtrack_health_probes_total", "counter", "Health check probes of each backend.", "target", probes);
    write_labelled(out, "flowtrack_health_probe_failures_total", "counter", "Health check probes that failed.", "target", failures);
    write_labelled(out, "flowtrack_health_transitions_total", "counter", "Times a backend went down or came up.", "target", transitions);
    write_labelled(out, "flowtrack_service_all_down_total", "counter", "Times every backend of a service was down at once.", "service",
                   c.all_down_events);
  }
  return out;
}

}  // namespace flowtrack
