// The health checks' probes over the kernel's sockets (runtime/health_checker.hpp runs them): each a
// non-blocking TCP connection to a target, which passes once connected (tcp), or once the answer to an
// HTTP/1.0 GET passes (http, nf/health_answer.hpp), and fails on a refusal, a reset, a wrong answer or its
// deadline. Many at once, driven by one poll() over their sockets; nothing here blocks but that poll.
//
// The probes leave by this host's routes, from the namespace the process runs in: on DPDK ports the
// kernel does not see, that is a management interface beside them (operating.md, "Health checks"). A
// tunnel-mode service's probes connect to the VIP through the probe tunnel (probe_tunnel.hpp), whose
// packets the wait for the probes relays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flowtrack/runtime/health_monitor.hpp"
#include "flowtrack/runtime/probe_tunnel.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

class HealthProbes {
 public:
  // `tunnel`: the way to tunnel-mode targets (none: their probes fail).
  explicit HealthProbes(ProbeTunnel* tunnel = nullptr) : tunnel_(tunnel) {}
  HealthProbes(const HealthProbes&) = delete;
  HealthProbes& operator=(const HealthProbes&) = delete;
  ~HealthProbes();  // closes what is still in flight

  // Starts probing `target` (its check says how), named `id` in the results, to be done by `deadline`
  // (a time of steady_now()).
  void start(std::size_t id, const HealthTarget& target, Nanos deadline);

  // Waits for the probes until `until` at most (a time of steady_now()), returning early when one is
  // done, and relays the probe tunnel's packets meanwhile; calls done(id, passed) for each probe done,
  // or past its deadline (failed), and forgets it.
  template <class Done>
  void wait(Nanos until, Done&& done) {
    poll_until(until);
    for (Probe& p : probes_) {
      if (p.phase == Phase::passed || p.phase == Phase::failed) done(p.id, p.phase == Phase::passed);
    }
    forget_finished();
  }

  std::size_t in_flight() const { return probes_.size(); }

  // The clock of the deadlines: CLOCK_MONOTONIC in nanoseconds.
  static Nanos steady_now();

 private:
  enum class Phase : std::uint8_t { connecting, sending, receiving, passed, failed };
  struct Probe {
    std::size_t id;
    int fd;
    Phase phase;
    Nanos deadline;
    const HealthCheckConfig* check;  // the target's, which outlives the probe (HealthMonitor owns it)
    std::string request;             // http: what is left to send
    std::string answer;              // http: what came back so far
  };

  void poll_until(Nanos until);
  // Binds a tunnel-mode target's socket to the address towards its backend and routes its port into the
  // backend's tunnel; false when that cannot be done.
  bool through_tunnel(int fd, const HealthTarget& target);
  void on_ready(Probe& p, short events);
  void connected(Probe& p);
  void receive(Probe& p);
  void finish(Probe& p, bool passed);
  void forget_finished();

  ProbeTunnel* tunnel_;
  std::vector<Probe> probes_;
};

}  // namespace flowtrack
