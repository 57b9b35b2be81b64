// A live data plane's counters (runtime/live_counters.hpp) in Prometheus' text exposition format
// (version 0.0.4), what runtime/metrics_server.hpp serves at /metrics. Every family has its HELP and
// TYPE lines; counters end in _total. The series:
//
//   flowtrack_info{nf="lb"} 1                                     gauge: which function runs
//   flowtrack_packets_received_total, _to_function_total, _sent_total    counters
//   flowtrack_drops_total{reason="no_port"}                       counter, one series per reason seen
//   flowtrack_connections_total, flowtrack_connections            counter (created), gauge (live)
//   flowtrack_arp_replies_sent_total, flowtrack_arp_requests_sent_total  counters
//   flowtrack_packets_handed_off_total, flowtrack_handoff_backoffs_total  counters (several workers)
//   flowtrack_backend_connections_total{backend="b1"}             lb only: counter, connections ever
//   flowtrack_backend_connections{backend="b1",phase="closing"}   lb only: gauge, live now, one series
//                                                                 per phase (opening, established, closing)
//
// Label values are escaped as the format asks (backslash, double quote, newline).
#pragma once

#include <string>

#include "flowtrack/runtime/live_counters.hpp"

namespace flowtrack {

std::string prometheus_text(const LiveCounters& counters);

}  // namespace flowtrack
