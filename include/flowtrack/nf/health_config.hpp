// How a service's backends are checked (a [[service]]'s [service.health] table; the checks themselves
// run in the control plane, runtime/health_checker.hpp): what a probe is, how often it runs, how many
// results in a row change a backend's state, and what the service does when every backend is down.
#pragma once

#include <cstdint>
#include <string>

#include "flowtrack/util/time.hpp"

namespace flowtrack {

// A probe: a TCP connection opened (and closed at once), or an HTTP/1.0 GET whose answer has the
// expected status and, when given, holds the expected text in its first 4 KiB.
enum class HealthProbe : std::uint8_t { tcp, http };

// A service whose every backend is down: fail_open keeps the last pool (the last backend to go down stays
// in it: a checker that fails, or a network between it and the backends, takes nothing down), drop
// empties it (its packets are dropped as no_backend).
enum class AllDown : std::uint8_t { fail_open, drop };

struct HealthCheckConfig {
  HealthProbe probe = HealthProbe::tcp;
  std::uint16_t port = 0;  // network order; 0: the backend's port, or the service's when it has none
  std::string path = "/";  // http: the request's path
  std::uint16_t status = 200;  // http: the answer's expected status
  std::string body;            // http: text the answer must hold ("" for any)
  Nanos interval = 2 * kNanosPerSecond;  // from one probe's start to the next's
  Nanos timeout = kNanosPerSecond;       // a probe not done by then failed
  std::uint32_t rise = 2;  // successes in a row that bring a down backend up
  std::uint32_t fall = 3;  // failures in a row that take an up backend down
  double jitter = 0;       // each interval drawn in interval * (1 +- jitter), so probes spread out
  AllDown all_down = AllDown::fail_open;
};

}  // namespace flowtrack
