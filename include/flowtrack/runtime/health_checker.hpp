// Active health checks in the control plane: a thread of their own (never a worker) that probes every
// checked backend (HealthProbes) as the state machine schedules it (HealthMonitor), and hands each pool
// change a transition brings to `on_change`, which passes it to the data plane between bursts (the
// workers' mailboxes). Its readers (ctl, Prometheus, telemetry) take a snapshot of the states and counts
// under a lock the thread holds for a moment after each result, never per packet.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "flowtrack/runtime/health_monitor.hpp"
#include "flowtrack/runtime/health_probe.hpp"
#include "flowtrack/runtime/probe_tunnel.hpp"

namespace flowtrack {

// What the checks say at one moment, for the counters' readers.
struct HealthSnapshot {
  std::vector<HealthTarget> targets;
  std::vector<TargetHealth> health;    // by target
  std::vector<ServiceHealth> services;
};

class HealthChecker {
 public:
  using OnChange = std::function<void(const PoolChange&)>;

  // Starts the thread over the checked services of `services` (none: it does nothing but wait to stop).
  // With tunnel-mode services checked, opens the probe tunnel first (probe_tunnel.hpp), and throws
  // std::runtime_error when it cannot.
  HealthChecker(std::span<const ServiceConfig> services, OnChange on_change, std::uint64_t seed = 1);
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;
  ~HealthChecker();  // stops the thread (within 100 ms), closing the probes in flight

  HealthSnapshot snapshot() const;

 private:
  void run();

  HealthMonitor monitor_;  // the thread's alone; snapshot() reads it under mutex_
  std::unique_ptr<ProbeTunnel> tunnel_;  // the thread's alone; none when no tunnel-mode service is checked
  OnChange on_change_;
  mutable std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it starts once everything above exists
};

}  // namespace flowtrack
