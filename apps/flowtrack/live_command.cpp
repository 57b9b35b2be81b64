// `flowtrack run --dpdk`: the options checked, the configuration read (once: a pipe gives its bytes once)
// and its memory checked against the machine's, the library's live service (runtime/live_service.hpp)
// run until SIGINT or SIGTERM, and its lines and report printed: a build that takes seconds announced
// once the ports are up, every stats
// interval a line of rates, drops by reason and live connections, summed over the workers; at the end
// the report, as text or one JSON object (--json: stdout holds the report alone, the lines go to
// stderr). The mbufs are counted back into their pool: a missing one is an error (exit status 1) after
// the report.
#include "live_command.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <map>
#include <sstream>

#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/runtime/engine.hpp"
#include "flowtrack/runtime/live_service.hpp"
#include "json_line.hpp"
#include "nf_launch.hpp"
#include "user_error.hpp"
#include "worker_limit.hpp"

namespace flowtrack::cli {
namespace {

// Set by the signal handler, read by the control plane (a lock-free atomic store is signal-safe).
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void request_stop(int) { stop_requested.store(true, std::memory_order_relaxed); }

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string drops_text(const std::map<std::string, std::uint64_t>& drops) {
  std::uint64_t total = 0;
  std::string detail;
  for (const auto& [reason, n] : drops) {
    total += n;
    detail += fmt::format("{}{} {}", detail.empty() ? "" : ", ", reason, n);
  }
  return drops.empty() ? "0" : fmt::format("{} ({})", total, detail);
}

class PrintingObserver : public LiveObserver {
 public:
  PrintingObserver(NfKind nf, Footprint footprint, std::FILE* out) : nf_(nf), footprint_(std::move(footprint)), out_(out) {}

  void started(const std::vector<Port>& ports, unsigned workers, unsigned rx_queues) override {
    for (std::size_t p = 0; p < ports.size(); ++p) {
      fmt::print(out_, "flowtrack live: nf {}, port {} {} mac {}, {} worker(s), {} RX queue(s)\n", nf_kind_name(nf_), p, ports[p].device,
                 mac_to_string(ports[p].mac), workers, rx_queues);
    }
    std::fflush(out_);
    announce_slow_build(nf_, footprint_);  // the workers build their tables next
  }

  void state(const std::string& note) override { print_note(note); }
  void pair(const std::string& note) override { print_note(note); }
  void route(const std::string& note) override { print_note(note); }

  void stats(const LiveCounters& now, const LiveCounters& before, Nanos interval, Nanos since_start) override {
    const double seconds = static_cast<double>(interval) / 1e9;
    fmt::print(out_, "flowtrack live: {:.0f} s, in {:.4f} Mpps, out {:.4f} Mpps, drops so far {}, live connections {}\n",
               static_cast<double>(since_start) / 1e9, static_cast<double>(now.packets_in - before.packets_in) / seconds / 1e6,
               static_cast<double>(now.packets_out - before.packets_out) / seconds / 1e6, drops_text(now.drops), now.connections_live);
    std::fflush(out_);
  }

 private:
  void print_note(const std::string& note) {
    fmt::print(out_, "flowtrack live: {}\n", note);
    std::fflush(out_);
  }

  NfKind nf_;
  Footprint footprint_;
  std::FILE* out_;
};

void print_report(const LiveReport& r, bool json) {
  const LiveCounters& s = r.counters;
  const auto rate = [&](std::uint64_t packets) { return r.seconds > 0 ? static_cast<double>(packets) / r.seconds / 1e6 : 0.0; };
  if (json) {
    JsonObject::parse(live_counters_json(s))
        .set("mode", "live")
        .set("workers", r.workers)
        .set("seconds", r.seconds)
        .set("mpps_in", rate(s.packets_in))
        .set("mpps_out", rate(s.packets_out))
        .set("mbufs_missing", r.mbufs_missing)
        .set("stopped_during_start", r.stopped_during_start)
        .print_line();
    return;
  }
  if (r.stopped_during_start) {
    fmt::print("flowtrack live: nf {} stopped during its start, before its workers served, {} worker(s)\n", s.nf, r.workers);
  } else {
    fmt::print("flowtrack live: nf {} stopped after {:.1f} s, {} worker(s)\n", s.nf, r.seconds, r.workers);
  }
  fmt::print("  packets in {}, to the function {}, out {}, handed between workers {} (waited for room {} times)\n", s.packets_in,
             s.packets_to_function, s.packets_out, s.handed_off, s.handoff_backoffs);
  fmt::print("  drops {}\n", drops_text(s.drops));
  fmt::print("  connections {} created, {} live at the end; ARP: {} answered, {} asked\n", s.connections, s.connections_live,
             s.arp_answered, s.arp_asked);
  for (const auto& [name, n] : s.backends) {
    const auto phases = s.backend_connections.find(name);
    if (phases == s.backend_connections.end()) {
      fmt::print("    {:<24} {} created\n", name, n);
      continue;
    }
    const auto& live = phases->second;
    fmt::print("    {:<24} {} created; live: {} opening, {} established, {} closing\n", name, n,
               live[static_cast<std::size_t>(ConnectionPhase::opening)], live[static_cast<std::size_t>(ConnectionPhase::established)],
               live[static_cast<std::size_t>(ConnectionPhase::closing)]);
  }
  fmt::print("  mbufs missing from their pool: {}\n", r.mbufs_missing);
}

}  // namespace

void live_command(const RunCommandOptions& o) {
  if (!o.in.empty() || !o.out.empty()) throw UserError("run: --dpdk runs on ports: no --in or --out");
  check_workers("run", o.workers);
  if (o.scaling != "sharded" || o.table != "cuckoo" || o.aging != "wheel") {
    throw UserError("run: --dpdk runs the default table, aging and scaling (cuckoo, wheel, sharded)");
  }
  if (o.burst == 0 || o.burst > kMaxBurst) throw UserError(fmt::format("run: --burst must be in 1..{}", kMaxBurst));
  if (o.check) throw UserError("run: --check checks a replay; live, the scenarios check from the outside");
  if (o.config.empty()) throw UserError("run: --dpdk needs --config FILE with a [dataplane] table");
  LiveServiceOptions options{.nf = o.nf, .workers = o.workers, .burst = o.burst, .eal_arguments = split_words(o.dpdk)};
  const ConfigText text = read_config_file(o.config);
  options.plane = load_dataplane_config(text, nf_kind_name(o.nf));
  NfConfigs configs = load_nf_configs(o.nf, text);
  Footprint footprint = nf_footprint(o.nf, configs, o.workers);
  check_footprint(footprint, o.config);
  options.slb = std::move(configs.slb);
  options.lb = std::move(configs.lb);
  options.nat = std::move(configs.nat);
  options.state = {o.state, o.start_empty, o.take_over};
  // From here a stop signal ends the run wherever it is: the set-up (the EAL's start, the ports', the
  // tables') stops at its next step, a running one at its workers' next tick.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  PrintingObserver observer(o.nf, std::move(footprint), o.json ? stderr : stdout);
  LiveReport report;
  try {
    report = run_live_service(options, stop_requested, observer);
  } catch (const StateRefused& e) {
    throw UserError(fmt::format("run: {}", e.what()));  // the operator's to decide: status 2
  }
  print_report(report, o.json);
  // Not the user's to fix: exit status 1 (main.cpp).
  if (report.mbufs_missing != 0) throw std::logic_error(fmt::format("{} mbufs did not come back to their pool", report.mbufs_missing));
}

}  // namespace flowtrack::cli
