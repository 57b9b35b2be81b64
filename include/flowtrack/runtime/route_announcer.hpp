// How an instance tells its routing speaker which VIPs to announce ([dataplane.announce]): flowtrack
// never speaks a routing protocol itself. It writes the VIPs as BIRD static routes to a file
// (nf/route_announcement.hpp), whole (a temporary file renamed over it: the speaker never reads half of
// one), then runs the operator's command, such as `birdc -s /run/bird.ctl configure`, which has the
// speaker read its configuration again; its BGP then sends the new routes or withdraws the gone ones.
//
// The control plane (live_service.cpp) publishes what it should announce at the start (nothing: a
// restarted instance does not keep a crashed one's announcement while it starts), every 100 ms while it
// serves, at once after `ctl drain-instance` and `undrain-instance`, and when it stops (nothing, before the data
// plane ends). Only a change writes the file and runs the command; a command that fails (or takes
// longer than kCommandTimeout: it is killed) is run again at the next publish, a second later at the soonest.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

class RouteAnnouncer {
 public:
  static constexpr Nanos kCommandTimeout = 5 * kNanosPerSecond;
  static constexpr Nanos kRetryAfter = kNanosPerSecond;

  // Tells the speaker to announce nothing. `note`: what to tell the operator (a failed command, a file
  // that cannot be written), as it happens. Throws std::runtime_error when the file cannot be written.
  RouteAnnouncer(AnnounceConfig config, std::function<void(const std::string&)> note);

  // Has the speaker announce `vips` (network order, ascending) and nothing else: true when the speaker
  // has been told (now or before), false when the file or the command failed.
  bool publish(const std::vector<std::uint32_t>& vips);

  const AnnounceConfig& config() const { return config_; }

 private:
  // Writes the file and runs the command; the problem, or nothing.
  std::optional<std::string> tell(const std::vector<std::uint32_t>& vips) const;

  AnnounceConfig config_;
  std::function<void(const std::string&)> note_;
  std::optional<std::vector<std::uint32_t>> told_;  // what the speaker was last told successfully
  std::optional<std::vector<std::uint32_t>> failed_;  // what failed to be told last, and when
  Nanos failed_at_ = 0;
};

// Runs `argv` (no shell; found in PATH), its standard output discarded, and waits for it up to
// `timeout`, after which it is killed. The problem (cannot start, killed, exit status), or nothing.
std::optional<std::string> run_program(const std::vector<std::string>& argv, Nanos timeout);

}  // namespace flowtrack
