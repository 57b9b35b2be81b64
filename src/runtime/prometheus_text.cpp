#include "flowtrack/runtime/prometheus_text.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <string_view>

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
  write_single(out, "flowtrack_arp_requests_sent_total", "counter", "ARP requests sent for next hops.", c.arp_asked);
  write_single(out, "flowtrack_packets_handed_off_total", "counter", "IPv4 frames a worker handed to the worker that owns them.",
               c.handed_off);
  write_single(out, "flowtrack_handoff_backoffs_total", "counter",
               "Times a worker found the hand-off ring of a packet's owner full and waited for room.", c.handoff_backoffs);
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
  return out;
}

}  // namespace flowtrack
