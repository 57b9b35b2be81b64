// flowtrack: connection tracking for stateful network functions on multi-core servers.
//
// The command line: every subcommand's options are declared here, the one file that compiles CLI11
// (about twenty seconds a file); each command's work is in its own file, reached through a plain
// options struct (bench_table.hpp, run_command.hpp, ...).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

#include "bench_aging.hpp"
#include "bench_compact.hpp"
#include "bench_nf.hpp"
#include "bench_scale.hpp"
#include "bench_table.hpp"
#include "bench_state.hpp"
#include "choices_command.hpp"
#include "churn_command.hpp"
#include "flowtrack/lab/compact_bench_runs.hpp"
#include "ctl_command.hpp"
#include "nat_log_command.hpp"
#include "flowtrack/lab/strategy_names.hpp"
#include "flowtrack/version.hpp"
#include "nf_names.hpp"
#include "run_command.hpp"
#include "run_context.hpp"
#include "sim_sched.hpp"
#include "trace_commands.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

void add_trace_options(CLI::App& command, SimTraceOptions& t) {
  command.add_option("--trace", t.kind, "header source: zipf, campus or pcap");
  command.add_option("--pcap", t.pcaps, "pcap files, one per service (fewer are shared)")->delimiter(',');
  command.add_option("--zipf-flows", t.zipf_flows, "flows of each Zipf trace")->check(CLI::Range(16u, 10'000'000u));
  command.add_option("--zipf-packets", t.zipf_packets, "packets of each Zipf trace (looped)");
  command.add_option("--zipf-exponent", t.zipf_exponent, "Zipf exponent")->check(CLI::Range(0.1, 4.0));
  command.add_option("--packet-bytes", t.packet_bytes, "packet size charged for Zipf traces");
  command.add_option("--campus-flows", t.campus_flows, "connections of each campus trace")->check(CLI::Range(1u, 10'000'000u));
  command.add_option("--trace-seed", t.seed, "seed of the synthetic traces");
}

void add_table_bench(CLI::App& bench) {
  auto options = std::make_shared<TableBenchOptions>();
  auto* table = bench.add_subcommand("table", "cycles per operation of every flow table");
  table->add_option("--tables", options->tables, "tables to measure (default: all)")->delimiter(',');
  table->add_option("--sizes", options->sizes, "capacities")->delimiter(',')->check(CLI::Range(std::size_t{64}, std::size_t{1} << 26));
  table->add_option("--loads", options->loads, "load factors")->delimiter(',')->check(CLI::Range(0.01, 1.0));
  table->add_option("--ops", options->ops, "insert, hit, miss, erase, churn")->delimiter(',')
      ->check(CLI::IsMember({"insert", "hit", "miss", "erase", "churn"}));
  table->add_option("--modes", options->modes, "single, bulk")->delimiter(',')->check(CLI::IsMember({"single", "bulk"}));
  table->add_option("--dist", options->dist, "lookup popularity: uniform or zipf")->check(CLI::IsMember({"uniform", "zipf"}));
  table->add_option("--reps", options->reps, "repetitions (median reported)");
  table->add_flag("--quick", options->quick, "sizes 64K and 1M, loads 0.5 and 0.9, 3 reps");
  table->add_flag("--json", options->json, "a context record, then one JSON object per line");
  table->callback([options] { run_reporting_user_errors("bench table", [&] { run_table_bench(*options); }); });
}

void add_compact_bench(CLI::App& bench) {
  auto o = std::make_shared<CompactBenchOptions>();
  auto* cmd = bench.add_subcommand("compact", "compact structures (Othello, Ludo, Cuckoo Filtable) and LB lookup structures");
  cmd->add_option("--structures", o->structures, "othello, ludo, filtable, concury, maglev-digest, silkroad (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(compact_structures()));
  cmd->add_option("--sizes", o->sizes, "keys (connections for the LB structures)")->delimiter(',')
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 27));
  cmd->add_option("--seed-bits", o->seed_bits, "Ludo's per-bucket seed widths")->delimiter(',')->check(CLI::Range(2u, 8u));
  cmd->add_option("--value-bits", o->value_bits, "value width of othello, ludo, filtable (concury: 12-bit Dcodes)");
  cmd->add_option("--fingerprint-bits", o->fingerprint_bits, "Cuckoo Filtable's fingerprint width")->check(CLI::Range(2u, 16u));
  cmd->add_option("--vips", o->vips, "VIPs of the LB structures")->check(CLI::Range(1u, 4096u));
  cmd->add_option("--dips", o->dips, "DIPs per VIP")->check(CLI::Range(1u, 256u));
  cmd->add_option("--reps", o->reps, "repetitions (median reported)");
  cmd->add_option("--queries", o->queries, "lookups a timing (single, bulk), a multiple of 16384")
      ->check(CLI::Range(kCompactQuerySegment, std::size_t{1} << 26));
  cmd->add_option("--arrivals", o->arrivals, "concury under load: new connections per second, several: each")
      ->delimiter(',')
      ->check(CLI::Range(1.0, 1e8));
  cmd->add_option("--dynamic-seconds", o->dynamic_seconds, "concury under load: seconds per arrival rate")->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--dip-change-every", o->dip_change_every, "concury under load: seconds between DIP changes")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_flag("!--same-core", o->control_thread,
                "concury under load: its control plane on the lookups' core between bursts, not on a thread of its own");
  cmd->add_flag("!--no-departures", o->departures,
                "concury under load: connections arrive and none departs, so the population grows (default: each "
                "arrival matched by the departure of its VIP's oldest connection)");
  cmd->add_flag("--concury-scalar", o->concury_scalar,
                "concury's bulk lookups on the scalar path (default: the AVX2 path where the CPU has it)");
  cmd->add_option_function<std::string>(
         "--concury-layout",
         [o](const std::string& name) {
           for (const auto layout : {compact::ConcuryLayout::pairs, compact::ConcuryLayout::blocks}) {
             if (compact::layout_name(layout) == name) o->concury_layout = layout;
           }
         },
         "concury's arrays: pairs (a key's two cells anywhere: two lines a lookup) or blocks (one line); "
         "default: by size, blocks beyond a core's share of the cache")
      ->check(CLI::IsMember({std::string(compact::layout_name(compact::ConcuryLayout::pairs)),
                             std::string(compact::layout_name(compact::ConcuryLayout::blocks))}));
  cmd->add_flag("--quick", o->quick, "sizes 1K, 64K, 1M; 2 reps");
  cmd->add_flag("--json", o->json, "a context record, then one JSON object per line");
  cmd->callback([o] { run_reporting_user_errors("bench compact", [&] { run_compact_bench(*o); }); });
}

void add_nf_bench(CLI::App& bench) {
  auto o = std::make_shared<NfBenchOptions>();
  auto* nf = bench.add_subcommand("nf", "Mpps of the network functions per table and worker count");
  nf->add_option("--nfs", o->nfs, "fwd, slb, lb, nat, concury")->delimiter(',');
  nf->add_option("--tables", o->tables, "the connection tables of the stateful LB and the NAT")->delimiter(',');
  nf->add_option("--agings", o->agings, "the trackers' aging policies: wheel, heap")->delimiter(',');
  nf->add_option("--scalings", o->scalings, "sharded (one instance per worker), spinlock (one shared instance)")->delimiter(',');
  nf->add_option("--control-planes", o->control_planes, "concury: worker, thread (where its control plane learns), several: each")
      ->delimiter(',')->check(CLI::IsMember(control_plane_names()));
  nf->add_option("--workers", o->workers, "worker counts (default: 1 .. usable cores)")->delimiter(',');
  nf->add_option("--burst", o->bursts, "packets per burst, several: each (1: the per-packet path)")->delimiter(',');
  nf->add_option("--flows", o->flows, "campus connections per window")->check(CLI::Range(1u, 5'000'000u));
  auto* windows = nf->add_option("--windows", o->windows, "shifted windows")->check(CLI::Range(1u, 255u));
  nf->add_option("--connections", o->connections, "size the trace for at least this many connections alive at once")
      ->excludes(windows);
  nf->add_option("--reps", o->reps, "repetitions (median reported)");
  nf->add_flag("!--no-stages", o->stages, "skip the extra run of each configuration that clocks its stages");
  nf->add_flag("--quick", o->quick, "small trace, four tables");
  nf->add_flag("--own-backends", o->own_backends,
               "every service on three backends of its own (default: the same three backends serve every service)");
  nf->add_option("--forwards", o->forwards,
                 "the load balancers' forwarding modes: nat, ipip, gue; several: each; nat-clients: NAT mode on the packets a "
                 "tunnel mode handles (with nat and a tunnel mode: always)")
      ->delimiter(',')
      ->check(CLI::IsMember({"nat", "ipip", "gue", "nat-clients"}));
  nf->add_option("--syn-flood", o->syn_flood, "measure again with this many spoofed SYNs mixed into the trace")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{100'000'000}));
  nf->add_option("--new-connection-rate", o->new_connection_rates,
                 "lb: new connections a second a worker takes (0: no limit); several: each, against no limit")
      ->delimiter(',')
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{100'000'000}));
  nf->add_flag("--nat-sync-events", o->nat_sync_events,
               "nat, wheel aging: measure again with a NAT pair's sync events made (into a discarding sink), against without");
  nf->add_flag("--lb-sync-events", o->lb_sync_events,
               "lb: measure again with its exceptions shared (events into a discarding sink), against without; "
               "every lb row drains a backend half way");
  nf->add_flag("--json", o->json, "a context record, then one JSON object per line");
  nf->callback([o] { run_reporting_user_errors("bench nf", [&] { run_nf_bench(*o); }); });
}

void add_scale_bench(CLI::App& bench) {
  auto o = std::make_shared<ScaleBenchOptions>();
  auto* scale = bench.add_subcommand("scale", "Mpps of the per-core runtime for every scaling strategy and table");
  scale->add_option("--strategies", o->strategies, "sharded, spinlock, spinlock-packet, rwlock, striped, lockfree, concurrent (default: all)")
      ->delimiter(',')->check(CLI::IsMember(strategy_names()));
  scale->add_option("--tables", o->tables, "tables (default: a set per strategy)")->delimiter(',');
  scale->add_option("--workers", o->workers, "worker counts (default: 1 .. usable cores)")->delimiter(',');
  scale->add_option("--pcap", o->pcap, "replay this trace instead of the synthetic campus one");
  scale->add_option("--flows", o->flows, "campus connections per window")->check(CLI::Range(1u, 10'000'000u));
  scale->add_option("--windows", o->windows, "shifted windows of the campus trace")->check(CLI::Range(1u, 255u));
  scale->add_option("--passes", o->passes, "times each worker replays its packets");
  scale->add_option("--reps", o->reps, "repetitions (median reported)");
  scale->add_option("--load", o->load, "table capacity = flows / load");
  scale->add_option("--timeout-ms", o->timeout_ms, "flow timeout of the timer-wheel aging (0: no aging)")->check(CLI::NonNegativeNumber);
  scale->add_flag("!--no-software", o->software, "skip sharded with software (dispatcher) steering");
  scale->add_flag("--quick", o->quick, "small trace, few tables, 3 reps");
  scale->add_flag("--json", o->json, "a context record, then one JSON object per line");
  scale->callback([o] { run_reporting_user_errors("bench scale", [&] { run_scale_bench(*o); }); });
}

void add_aging_bench(CLI::App& bench) {
  auto o = std::make_shared<AgingBenchOptions>();
  auto* aging = bench.add_subcommand("aging", "cost of the aging methods under churn, by expiry frequency");
  aging->add_option("--methods", o->methods, "wheel, lazy, scan, heap")->delimiter(',')
      ->check(CLI::IsMember({"wheel", "lazy", "scan", "heap"}));
  aging->add_option("--frequencies", o->frequencies, "expiry frequencies in Hz")->delimiter(',');
  aging->add_option("--capacity", o->capacity, "table capacity")->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 26));
  aging->add_option("--live-share", o->live_share, "live flows as a share of capacity");
  aging->add_option("--new-share", o->new_share, "share of packets that start a new flow");
  aging->add_option("--rate-mpps", o->rate_mpps, "virtual packet rate")->check(CLI::PositiveNumber);
  aging->add_option("--timeout-ms", o->timeout_ms, "idle timeout");
  aging->add_option("--packets", o->packets, "packets per run")->check(CLI::Range(std::uint64_t{1024}, std::uint64_t{1} << 32));
  aging->add_option("--reps", o->reps, "repetitions (median reported)");
  aging->add_flag("--quick", o->quick, "256K flows, 2M packets, 10/100/1000 Hz");
  aging->add_flag("--json", o->json, "a context record, then one JSON object per line");
  aging->callback([o] { run_reporting_user_errors("bench aging", [&] { run_aging_bench(*o); }); });
}

void add_state_bench(CLI::App& bench) {
  auto o = std::make_shared<StateBenchOptions>();
  auto* state = bench.add_subcommand("state", "seconds to save a NAT's and an LB's connections to a state file and restore them");
  state->add_option("--nfs", o->nfs, "nat, lb")->delimiter(',')->check(CLI::IsMember({"nat", "lb"}));
  state->add_option("--connections", o->connections, "connections in the instance")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
  state->add_option("--path", o->path, "the state file (default: one in the temporary directory, removed after)");
  state->add_option("--reps", o->reps, "repetitions (median reported)");
  state->add_flag("--json", o->json, "a context record, then one JSON object per line");
  state->callback([o] { run_reporting_user_errors("bench state", [&] { run_state_bench(*o); }); });
}

void add_bench_commands(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "benchmarks");
  bench->require_subcommand(1);
  add_table_bench(*bench);
  add_scale_bench(*bench);
  add_aging_bench(*bench);
  add_nf_bench(*bench);
  add_compact_bench(*bench);
  add_state_bench(*bench);
}

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCommandOptions>();
  auto* run = app.add_subcommand("run", "replay a pcap through a network function, or run it live on DPDK ports (--dpdk)");
  run->add_option("--nf", o->nf, "fwd, slb, lb, nat, concury")->transform(CLI::CheckedTransformer(nf_kinds_by_name()));
  run->add_option("--config", o->config, "the function's TOML configuration (see examples/)");
  run->add_option("--in", o->in, "input pcap or pcapng (or --dpdk)");
  run->add_option("--dpdk", o->dpdk, "run live on DPDK ports: the EAL arguments, the ports in the configuration's [dataplane]");
  run->add_option("--state", o->state, "live nat and lb: restore the state from FILE at the start, save it there at the stop");
  run->add_flag("--start-empty", o->start_empty, "with --state: start without state when the file is missing or refused");
  run->add_flag("--take-over", o->take_over,
                "with --state: once ready to serve, take the state of the process running on the control socket (it stops)");
  run->add_option("--out", o->out, "write the forwarded packets here");
  run->add_option("--out-format", o->out_format, "pcap (default) or pcapng")->check(CLI::IsMember({"pcap", "pcapng"}));
  run->add_option("--workers", o->workers, "worker threads (RSS steering)");
  run->add_option("--burst", o->burst, "packets per burst (1: one packet at a time)");
  run->add_option("--table", o->table, "connection table (lb, nat): any table of `bench table` but the many-writer ones");
  run->add_option("--scaling", o->scaling, "sharded (one function instance per worker) or spinlock (one shared instance, lb and nat)")
      ->check(CLI::IsMember(nf_scaling_names()));
  run->add_option("--aging", o->aging, "the connection tracker's expiry: wheel (timer wheel) or heap (binary heap)")
      ->check(CLI::IsMember(nf_aging_names()));
  run->add_option("--control-plane", o->control_plane,
                  "concury: where its control plane learns the connections, on the worker or on a thread of its own")
      ->check(CLI::IsMember(control_plane_names()));
  run->add_option("--dispatch", o->dispatch,
                  "partition (RSS before the run), rss or laps (a dispatcher thread feeding worker rings)")
      ->check(CLI::IsMember({"partition", "rss", "laps"}));
  run->add_option("--ring", o->ring, "dispatched: packet slots per worker ring (LAPS's threshold is half)");
  run->add_option("--slow-worker-ns", o->slow_worker_ns, "dispatched: busy work added to worker 0 per packet");
  run->add_flag("--check", o->check,
                "lb, concury: check every connection's packets reach one backend, in its pool (a hash map per packet: off by default)");
  run->add_flag("--json", o->json, "one JSON object");
  run->callback([o] { run_reporting_user_errors("run", [&] { run_command(*o); }); });
}

void add_ctl_command(CLI::App& app) {
  auto socket = std::make_shared<std::string>();
  auto request = std::make_shared<std::vector<std::string>>();
  auto* ctl = app.add_subcommand("ctl", "a request to a live data plane's control socket (run --dpdk)");
  ctl->add_option("--socket", *socket, "the control socket ([dataplane] control_socket)")->required();
  ctl->add_option("request", *request,
                  "counters | save-state | takeover | add SERVICE BACKEND ADDRESS PORT WEIGHT | drain SERVICE BACKEND | remove SERVICE BACKEND | "
                  "weight SERVICE BACKEND WEIGHT")
      ->required();
  ctl->callback([socket, request] { run_reporting_user_errors("ctl", [&] { ctl_command(*socket, *request); }); });
}

void add_choices_command(CLI::App& app) {
  auto o = std::make_shared<ChoicesOptions>();
  auto* choices = app.add_subcommand("choices", "the backend the stateful LB's consistent choice gives each tuple, to compare instances");
  choices->add_option("--config", o->config, "the instance's configuration (its services, pool and [lb] deployment_key)")->required();
  choices->add_option("--history", o->history, "the pool changes it took since its start, one `ctl` request a line");
  auto* tuples = choices->add_option("--tuples", o->tuples, "tuples, one a line: SRC:PORT -> DST:PORT tcp|udp");
  choices->add_option("--pcap", o->pcap, "every distinct TCP or UDP tuple to a service in this capture")->excludes(tuples);
  choices->callback([o] { run_reporting_user_errors("choices", [&] { choices_command(*o); }); });
}

void add_churn_command(CLI::App& app) {
  auto o = std::make_shared<ChurnOptions>();
  auto* churn = app.add_subcommand("churn", "simulated: the connections each LB design breaks as instances behind ECMP and backends change");
  churn->add_option("--instances", o->instances, "numbers of LB instances, one run each")->delimiter(',')->check(CLI::Range(1u, 1024u));
  churn->add_option("--backends", o->workload.backends, "backends")->check(CLI::Range(1u, 1000u));
  churn->add_option("--seconds", o->workload.seconds, "simulated time")->check(CLI::Range(1.0, 1e6));
  churn->add_option("--rate", o->workload.arrivals_per_second, "new connections a second")->check(CLI::Range(0.001, 1e5));
  churn->add_option("--mean-duration", o->workload.mean_duration, "a connection's mean lifetime, seconds")->check(CLI::Range(0.001, 1e6));
  churn->add_option("--backend-every", o->workload.backend_every, "seconds between two changes of the pool")->check(CLI::Range(0.001, 1e6));
  churn->add_option("--instance-every", o->workload.instance_every, "seconds between two changes of the instances")->check(CLI::Range(0.001, 1e6));
  churn->add_option("--sync-delay", o->sync_delay, "seconds for a shared exception to reach the other instances")->check(CLI::Range(0.0, 3600.0));
  churn->add_flag("--resilient", o->resilient, "the router's ECMP by a resilient next-hop group (default: hash-threshold)");
  churn->add_option("--seed", o->workload.seed, "the workload's seed");
  churn->callback([o] { run_reporting_user_errors("churn", [&] { churn_command(*o); }); });
}

void add_nat_log_commands(CLI::App& app) {
  auto* nat_log = app.add_subcommand("nat-log", "the NAT's port-block log");
  nat_log->require_subcommand(1);
  auto o = std::make_shared<NatLogWhoOptions>();
  auto* who = nat_log->add_subcommand("who", "the inside address that held a public address and port at a time");
  who->add_option("endpoint", o->endpoint, "PUBLIC_ADDRESS:PORT")->required();
  who->add_option("time", o->time, "RFC 3339 in UTC (2026-11-28T09:30:00Z) or seconds since the epoch")->required();
  who->add_option("--log", o->logs, "a journal file ([nat] block_log); several are read together")->required();
  who->add_flag("--json", o->json, "one JSON object");
  who->callback([o] { run_reporting_user_errors("nat-log who", [&] { nat_log_who_command(*o); }); });
}

void add_sim_commands(CLI::App& app) {
  auto* sim = app.add_subcommand("sim", "simulators");
  sim->require_subcommand(1);

  auto o = std::make_shared<SimOptions>();
  auto* sched = sim->add_subcommand("sched", "flow-to-core scheduling (LAPS, AFS, FCFS, RSS) on a simulated 16-core processor");
  sched->add_option("--policy", o->policies, "laps, afs, fcfs, rss, ideal (LAPS without penalties); default all but ideal")->delimiter(',');
  sched->add_option("--scenario", o->scenario, "the paper's T1 .. T8 (sets rates and trace)");
  sched->add_option("--rates", o->rates, "underload (set 1), overload (set 2) or equal (with --offered)");
  sched->add_option("--offered", o->offered, "total offered Mpps split equally among services; several: a sweep")->delimiter(',');
  add_trace_options(*sched, o->trace);
  sched->add_option("--duration-s", o->duration_s, "simulated seconds of arrivals");
  sched->add_option("--cores", o->cores, "cores")->check(CLI::Range(4u, 256u));
  sched->add_option("--queue", o->queue, "input queue descriptors per core")->check(CLI::Range(1u, 65536u));
  sched->add_option("--qthresh", o->qthresh, "load at which a core is overloaded")->check(CLI::Range(1u, 65536u));
  sched->add_option("--low-water", o->low_water, "LAPS: least load of a service at which it asks for a core")->check(CLI::Range(1u, 65536u));
  sched->add_flag("--migrate-to-any-lighter", o->migrate_to_any_lighter,
                  "LAPS, AFS: migrate onto any lighter core, not only one under --qthresh");
  sched->add_option("--annex", o->annex, "annex cache entries of the detector")->check(CLI::Range(0, 1 << 24));
  sched->add_option("--sampling", o->sampling, "probability that a packet feeds the detector (default 0.1)")->check(CLI::Range(1e-9, 1.0));
  sched->add_option("--idle-us", o->idle_us, "idle time after which a core is surplus");
  sched->add_option("--timeline-ms", o->timeline_ms, "report offered load and cores per service every this many ms (JSON)");
  sched->add_flag("--migration-census", o->migration_census,
                  "at each migration, count the distinct and the aggressive flows on the core left (JSON histograms)");
  sched->add_option("--seed", o->seed, "seed of arrivals and sampling");
  sched->add_option("--reps", o->reps, "repetitions (wall time: median)");
  sched->add_flag("--json", o->json, "a context record, then one JSON object per run");
  sched->callback([o] { run_reporting_user_errors("sim sched", [&] { run_sim(*o); }); });

  auto a = std::make_shared<AfdOptions>();
  auto* afd = sim->add_subcommand("afd", "aggressive flow detector: false positives against annex size and sampling");
  add_trace_options(*afd, a->trace);
  afd->add_option("--annex", a->annex, "annex sizes")->delimiter(',');
  afd->add_option("--sampling", a->sampling, "sampling probabilities")->delimiter(',');
  afd->add_option("--cache", a->cache, "aggressive flow cache entries (= top flows sought)");
  afd->add_option("--window", a->windows, "check accuracy every this many packets against each window's top flows")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40));
  afd->add_option("--seed", a->seed, "sampling seed");
  afd->add_flag("--json", a->json, "a context record, then one JSON object per configuration");
  afd->callback([a] { run_reporting_user_errors("sim afd", [&] { run_afd(*a); }); });
}

void add_trace_commands(CLI::App& app) {
  auto* trace = app.add_subcommand("trace", "generate and inspect traces");
  trace->require_subcommand(1);

  auto gen_options = std::make_shared<TraceGenOptions>();
  auto* gen = trace->add_subcommand("gen", "generate a synthetic trace");
  gen->add_option("--profile", gen_options->profile, "campus, uniform or zipf")
      ->check(CLI::IsMember({"campus", "uniform", "zipf"}));
  gen->add_option("--flows", gen_options->flows, "connections in the trace")->check(CLI::Range(1u, 100'000'000u));
  gen->add_option("--duration", gen_options->duration_s, "seconds (campus: sets the flow arrival rate)");
  gen->add_option("--pps", gen_options->pps, "packets per second (uniform, zipf)");
  gen->add_option("--packets", gen_options->packets, "packets (uniform, zipf; default 10 per flow)");
  gen->add_option("--seed", gen_options->seed, "random seed");
  gen->add_option("--zipf-exponent", gen_options->zipf_exponent, "Zipf exponent s");
  gen->add_option("--windows", gen_options->windows, "replay K shifted copies at once")->check(CLI::Range(1u, 256u));
  gen->add_option("--snaplen", gen_options->snaplen, "bytes stored per frame (campus; 0 = whole frames)");
  gen->add_option("--format", gen_options->format, "pcap or pcapng")->check(CLI::IsMember({"pcap", "pcapng"}));
  gen->add_option("-o,--output", gen_options->output, "output file")->required();
  gen->callback([gen_options] { run_reporting_user_errors("trace gen", [&] { run_trace_gen(*gen_options); }); });

  auto stats_options = std::make_shared<TraceStatsOptions>();
  auto* stats = trace->add_subcommand("stats", "statistics of a pcap or pcapng trace");
  stats->add_option("file", stats_options->path, "trace file")->required();
  stats->add_flag("--json", stats_options->json, "one JSON object");
  stats->add_option("--top", stats_options->top, "heaviest flows to list");
  stats->callback([stats_options] { run_reporting_user_errors("trace stats", [&] { run_trace_stats(*stats_options); }); });

  auto ports_options = std::make_shared<TracePortsOptions>();
  auto* ports = trace->add_subcommand("ports", "a client-side trace as a function's live ports receive it, a file a port and queue");
  ports->add_option("--nf", ports_options->nf, "lb or nat")->check(CLI::IsMember({"lb", "nat"}));
  ports->add_option("--config", ports_options->config, "the live run's configuration (the function's and [dataplane])")->required();
  ports->add_option("--workers", ports_options->workers, "the live run's workers");
  ports->add_option("--queues", ports_options->queues, "RX queues of each port");
  ports->add_option("--split", ports_options->split, "rss: the queue the port's RSS gives a frame; owner: its owner's")
      ->check(CLI::IsMember({"rss", "owner"}));
  ports->add_option("--macs", ports_options->macs, "each port's MAC, in [[dataplane.port]] order")->delimiter(',')->required();
  ports->add_option("file", ports_options->input, "the trace, captured on the function's client side")->required();
  ports->add_option("-o,--output", ports_options->output, "prefix of the files: PREFIX-ROLE-QUEUE.pcap")->required();
  ports->callback([ports_options] { run_reporting_user_errors("trace ports", [&] { run_trace_ports(*ports_options); }); });
}

}  // namespace
}  // namespace flowtrack::cli

int main(int argc, char** argv) {
  flowtrack::cli::remember_command_line(argc, argv);
  CLI::App app{"flowtrack: fast, correct connection tracking for stateful network functions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "flowtrack " FLOWTRACK_VERSION);
  flowtrack::cli::add_trace_commands(app);
  flowtrack::cli::add_bench_commands(app);
  flowtrack::cli::add_run_command(app);
  flowtrack::cli::add_ctl_command(app);
  flowtrack::cli::add_choices_command(app);
  flowtrack::cli::add_churn_command(app);
  flowtrack::cli::add_nat_log_commands(app);
  flowtrack::cli::add_sim_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const flowtrack::cli::UserError& e) {
    fmt::print(stderr, "flowtrack: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "flowtrack: error: {}\n", e.what());
    return 1;
  }
  // What a command printed (its report, its JSON lines) must have reached its destination: standard
  // output redirected to a full disk or /dev/full is an error, not a silent loss. The stream's error
  // flag stays set once a write failed, so this checks every write before.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    fmt::print(stderr, "flowtrack: error: writing the standard output failed: {}\n", std::strerror(errno));
    return 1;
  }
  return 0;
}
