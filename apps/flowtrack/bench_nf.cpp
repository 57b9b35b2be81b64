// `flowtrack bench nf`: packets per second of each network function (the LB and the NAT replaying the
// trace as captured on their client side, replay_rehearsal.hpp) on the campus trace multiplied by
// shifted windows, for every connection table, tracker aging and scaling of the stateful ones, on 1..N
// workers (nf_runner.hpp), in bursts of each --burst size, median of --reps (and the best of them,
// for a shared machine). Reports each function against the forwarder and each burst size against
// bursts of one (the per-packet path), both measured in the same run, the repetitions of all
// configurations interleaved and each ratio the median of the repetitions' ratios ([lb-flowtables]: the
// stateless LB ran ~60 % faster than the stateful one), ranks the
// stateful LB's configurations and sets each shared (spinlock) configuration against its sharded twin.
// One more run of each configuration clocks its stages (parse, lookup, state, rewrite, aging: a clock
// read per stage and burst, so it is not the run the Mpps come from).
//
// --connections N sizes the trace so that the stateful functions hold at least N connections at once
// (windows_for); live_connections reports the most their trackers held at once.
//
// --forwards runs the load balancers in each forwarding mode (nat, ipip, gue: nf/tunnel.hpp; in a tunnel
// the trace's answers are left out, as the backends send them to the clients directly), and reports
// each tunnel mode's cycles a packet against NAT mode's of the same run (and, with the stages clocked,
// the same without its encapsulation: cycles_vs_nat_mode_besides_rewrite). With a tunnel mode and NAT mode
// asked for (or nat-clients itself), the load balancers run once more in NAT mode over the packets a tunnel mode
// handles, the answers left out (kNatOnTunnelPackets): the tunnel modes' cycles a packet against NAT
// mode's on the same packets (cycles_vs_nat_mode_same_packets), where the whole trace's NAT mode
// averages in its answers, which cost less (no connection is opened by one). packets_handled says how
// many packets a row's function was given (a tunnel mode's: the clients'). --syn-flood N measures every
// configuration once more on the trace with N spoofed SYNs mixed in (syn_flood_mix.hpp);
// --new-connection-rate measures the stateful LB at each limit given (new_connection_limiter.hpp; 0: no
// limit, always measured too). Each limited or flooded configuration's cycles a packet are reported
// against the same LB without a limit on the same trace, and against the anchor: the LB without a limit
// on the trace without the flood, all in the same run. --nat-sync-events measures each NAT configuration
// with the wheel aging once more with the sync events of a NAT pair made (nf/nat_events.hpp, into a sink
// that discards them: discarding_nat_events.hpp), its cycles a packet against the same NAT's without.
// --lb-sync-events does the same for the stateful LB's shared exceptions (nf/lb_exceptions.hpp: marked
// at a pool change, told as they become and stop being ones, into a sink that discards them; no peer's
// held): every LB row, with and without, then drains the first service's first backend half way
// through the trace, so that the connections it holds become exceptions and end as ones.
//
// Beside every stateful configuration, the memory system's limit over its state (lab/memory_limit.hpp:
// random line reads from an array as large as the memory its lookups range over, summed over its
// instances) and its cycles a packet as a multiple of a batched line fetch (line_fetches): the figure
// that compares across hosts with other caches and memory.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>

#include "bench_nf.hpp"
#include "direct_returns.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/lab/registry.hpp"
#include "flowtrack/util/statistics.hpp"
#include "json_line.hpp"
#include "memory_limit_report.hpp"
#include "nf_launch.hpp"
#include "run_context.hpp"
#include "syn_flood_mix.hpp"
#include "user_error.hpp"
#include "worker_limit.hpp"

namespace flowtrack::cli {
namespace {

// The campus profile's servers as VIPs: TCP 443 and 80, UDP 53 and 443, three backends each.
std::vector<ServiceConfig> campus_services(const CampusProfile& profile, bool own_backends) {
  std::vector<ServiceConfig> services;
  for (std::uint32_t server = 1; server <= profile.servers; ++server) {
    for (const auto& [port, protocol] : {std::pair{443, ipproto::kTcp}, std::pair{80, ipproto::kTcp},
                                         std::pair{53, ipproto::kUdp}, std::pair{443, ipproto::kUdp}}) {
      ServiceConfig s{fmt::format("svc-{}-{}", server, port), to_network32(profile.server_network + server),
                      to_network16(static_cast<std::uint16_t>(port)), protocol, {}};
      // 10.200.0.1-3 for every service, or 10.200.<service>.1-3 for each.
      const auto network = 0x0ac80000 + (own_backends ? static_cast<std::uint32_t>(services.size() + 1) << 8 : 0u);
      for (std::uint32_t b = 1; b <= 3; ++b) {
        const std::string name = own_backends ? fmt::format("{}-backend-{}", s.name, b) : fmt::format("backend-{}", b);
        s.backends.push_back({name, to_network32(network + b), 0, 1});
      }
      services.push_back(s);
    }
  }
  return services;
}

// One configuration at one burst size: its repetitions' figures in run order, and what its last
// repetition held and dropped (the same in every repetition: the trace and the function are).
struct NfRow {
  NfChoice choice;
  std::size_t burst = 0;
  std::string forward = "nat";  // the load balancers' mode ("-" for the others)
  bool flood = false;           // on the trace with the SYN flood mixed in
  std::uint64_t rate = 0;       // lb: the new-connection limit (0: none)
  std::vector<double> mpps, cycles;
  std::uint64_t handled = 0;  // packets given to the function in a repetition
  std::size_t live = 0;
  std::size_t state_bytes = 0;  // the memory of the function's per-packet lookups, over its instances (0: none)
  std::map<std::string, std::uint64_t> drop_reasons;
  std::uint64_t over_rate = 0;  // lb: first packets forwarded without state, above the new-connection rate
  std::uint64_t sync_events = 0;  // nat with its sync events: the events made in a repetition
  std::array<double, kNfStageCount> stage_cycles{};  // by NfStage, from the clocked run (JSON with stages only)
};

// A tunnel mode's cycles a packet with its rewrite stage (the encapsulation) left out, over NAT mode's
// whole cycles a packet, both from their clocked runs: the least the mode could cost against NAT mode
// however cheap its encapsulation were. What stays is its other stages over the packets it handles, the
// clients' only: a connection's first-packet work (the choice, the tracker's entry) spread over half as
// many packets as in NAT mode.
double cycles_vs_nat_mode_besides_rewrite(const NfRow& row, const NfRow& nat) {
  double besides = 0, whole = 0;
  for (std::size_t s = 0; s < kNfStageCount; ++s) {
    if (static_cast<NfStage>(s) != NfStage::rewrite) besides += row.stage_cycles[s];
    whole += nat.stage_cycles[s];
  }
  return whole > 0 ? besides / whole : 0;
}

const NfRow* find_row(const std::vector<NfRow>& rows, const NfChoice& choice, std::size_t burst, std::string_view forward,
                    bool flood, std::uint64_t rate = 0) {
  const auto it = std::ranges::find_if(rows, [&](const NfRow& r) {
    return r.burst == burst && r.choice == choice && r.forward == forward && r.flood == flood && r.rate == rate;
  });
  return it == rows.end() ? nullptr : &*it;
}

// The pseudo forwarding mode of a row that runs NAT mode over the trace without the answers a tunnel
// mode's backends return directly: the packets a tunnel mode handles, forwarded by rewriting addresses.
constexpr std::string_view kNatOnTunnelPackets = "nat-clients";

bool is_tunnel_mode(std::string_view forward) { return forward != "nat" && forward != "-" && forward != kNatOnTunnelPackets; }

// The rows a row's cycles a packet are set against: NAT mode (a tunnel mode's, and the row of NAT mode
// on the same packets'), NAT mode on the tunnel's packets (a tunnel mode's), no limit on the same trace
// (a limited row's), the anchor of a flood: no limit on the trace without the flood, and the NAT
// without its sync events (a row with them).
struct Anchors {
  const NfRow* nat_mode = nullptr;
  const NfRow* nat_same_packets = nullptr;
  const NfRow* no_limit = nullptr;
  const NfRow* no_flood = nullptr;
  const NfRow* no_sync_events = nullptr;
};

Anchors anchors_of(const std::vector<NfRow>& rows, const NfRow& r) {
  Anchors a;
  if (r.forward != "nat" && r.forward != "-") a.nat_mode = find_row(rows, r.choice, r.burst, "nat", r.flood, r.rate);
  if (is_tunnel_mode(r.forward)) a.nat_same_packets = find_row(rows, r.choice, r.burst, kNatOnTunnelPackets, r.flood, r.rate);
  if (r.rate != 0) a.no_limit = find_row(rows, r.choice, r.burst, r.forward, r.flood);
  if (r.flood) a.no_flood = find_row(rows, r.choice, r.burst, r.forward, false);
  if (r.choice.nat_sync_events || r.choice.lb_sync_events) {
    NfChoice without = r.choice;
    without.nat_sync_events = without.lb_sync_events = false;
    a.no_sync_events = find_row(rows, without, r.burst, r.forward, r.flood, r.rate);
  }
  return a;
}

// Whether a function has forwarding modes: the load balancers.
bool forwards(NfKind nf) { return nf == NfKind::slb || keeps_connections_on_backends(nf); }

// A row's Mpps against an anchor row's, repetition by repetition (the two ran in the same sweep of the
// interleaved repetitions), then the median of those ratios.
double paired_ratio(const NfRow& row, const NfRow& anchor) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < row.mpps.size(); ++r) ratios.push_back(row.mpps[r] / anchor.mpps[r]);
  return median(std::move(ratios));
}

// The same of cycles a packet: what a tunnel mode or a flood costs each packet the function handles
// (their runs handle different packets: a tunnel's leave the answers out, a flood's add the SYNs).
double paired_cycles_ratio(const NfRow& row, const NfRow& anchor) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < row.cycles.size(); ++r) ratios.push_back(row.cycles[r] / anchor.cycles[r]);
  return median(std::move(ratios));
}

// Windows of a campus trace of `flows` connections for `connections` alive at once in a function: each
// window adds `flows` connections, and the trackers hold a connection until its idle timeout, longer
// than the trace's few seconds for nearly all of them (measured: 95.6 % of the trace's connections alive
// at the end, the rest closed and timed out), so a tenth more windows than the quotient. live_connections
// then reports what the trackers really held.
unsigned windows_for(std::uint32_t flows, std::size_t connections) {
  const std::size_t windows = (connections + connections / 10 + flows - 1) / flows;
  if (windows > 255) {
    throw UserError(fmt::format("bench nf: --connections {} needs {} windows of {} connections (at most 255); raise --flows",
                                connections, windows, flows));
  }
  return static_cast<unsigned>(std::max<std::size_t>(windows, 1));
}

// The stateful LB's configurations ranked at the largest worker count, and every shared (spinlock)
// configuration against its sharded twin: all from this run's medians.
void print_summary(const std::vector<NfRow>& rows, unsigned workers, std::size_t burst) {
  std::vector<const NfRow*> lb_rows;
  for (const NfRow& r : rows) {
    if (r.choice.nf == NfKind::lb && r.choice.workers == workers && r.burst == burst && r.forward == "nat" && !r.flood && r.rate == 0) {
      lb_rows.push_back(&r);
    }
  }
  std::ranges::sort(lb_rows, [](const NfRow* a, const NfRow* b) { return median(a->mpps) > median(b->mpps); });
  if (!lb_rows.empty()) {
    fmt::print("\nstateful LB ranked by Mpps at {} worker(s), bursts of {} (same run):\n", workers, burst);
  }
  for (std::size_t i = 0; i < lb_rows.size(); ++i) {
    const NfChoice& c = lb_rows[i]->choice;
    fmt::print("  {:>2}. {:<12} {:<6} {:<9} {:>7.2f} Mpps  {:>7.1f} cycles/packet\n", i + 1, c.table, c.aging, c.scaling,
               median(lb_rows[i]->mpps), median(lb_rows[i]->cycles));
  }
  bool header = false;
  for (const NfRow& shared : rows) {
    if (shared.choice.scaling != "spinlock") continue;
    for (const NfRow& sharded : rows) {
      const NfChoice& a = shared.choice;
      const NfChoice& b = sharded.choice;
      if (b.scaling != "sharded" || a.nf != b.nf || a.table != b.table || a.aging != b.aging || a.workers != b.workers ||
          shared.burst != sharded.burst || shared.forward != sharded.forward || shared.flood != sharded.flood ||
          shared.rate != sharded.rate || a.nat_sync_events != b.nat_sync_events || a.lb_sync_events != b.lb_sync_events) {
        continue;
      }
      if (!header) fmt::print("\none shared instance under a spinlock / one instance per worker (Mpps, same run):\n");
      header = true;
      fmt::print("  {:<4} {:<12} {:<6} {} worker(s), bursts of {}: {:.2f}x\n", nf_kind_name(a.nf), a.table, a.aging, a.workers, shared.burst,
                 median(shared.mpps) / median(sharded.mpps));
    }
  }
  header = false;
  for (const NfRow& r : rows) {
    const Anchors a = anchors_of(rows, r);
    if (a.nat_mode == nullptr && a.nat_same_packets == nullptr && a.no_limit == nullptr && a.no_flood == nullptr &&
        a.no_sync_events == nullptr) {
      continue;
    }
    if (!header) {
      fmt::print("\ncycles a packet against NAT mode, against no limit on the same trace, against no limit without the "
                 "flood, and against no sync events (paired, same run):\n");
    }
    header = true;
    fmt::print("  {:<7} {:<12} {:<6} {:<9} {} worker(s), bursts of {}, {}{}{}{}:", nf_kind_name(r.choice.nf), r.choice.table,
               r.choice.aging, r.choice.scaling, r.choice.workers, r.burst, r.forward, r.flood ? " + SYN flood" : "",
               r.rate != 0 ? fmt::format(", limit {}/s", r.rate) : "", r.choice.nat_sync_events || r.choice.lb_sync_events ? " + sync events" : "");
    if (a.nat_mode != nullptr) fmt::print(" {:.3f}x NAT mode", paired_cycles_ratio(r, *a.nat_mode));
    if (a.nat_same_packets != nullptr) fmt::print(" {:.3f}x NAT mode on the same packets", paired_cycles_ratio(r, *a.nat_same_packets));
    if (a.no_limit != nullptr) fmt::print(" {:.3f}x no limit", paired_cycles_ratio(r, *a.no_limit));
    if (a.no_flood != nullptr) fmt::print(" {:.3f}x no limit without the flood", paired_cycles_ratio(r, *a.no_flood));
    if (a.no_sync_events != nullptr) fmt::print(" {:.3f}x no sync events ({} events a run)", paired_cycles_ratio(r, *a.no_sync_events), r.sync_events);
    std::uint64_t drops = 0;
    for (const auto& [reason, n] : r.drop_reasons) drops += n;
    fmt::print(" ({} connections live at most, {} over the rate, {} dropped)\n", r.live, r.over_rate, drops);
  }
}

}  // namespace

void run_nf_bench(NfBenchOptions o) {
  if (o.quick) {
    o.flows = std::min<std::uint32_t>(o.flows, 5'000);
    o.windows = std::min(o.windows, 2u);
    o.reps = std::min(o.reps, 3u);
  }
  if (o.tables.empty()) {
    o.tables = o.quick ? grid_subset({"cuckoo", "dpdk", "chained", "stdmap"}, GridUse::functions)
                       : grid_subset({"cuckoo", "cuckoopp", "dpdk", "chained", "robinhood", "hopscotch", "swiss", "stdmap"}, GridUse::functions);
  }
  if (o.reps == 0) throw UserError("bench nf: --reps must be at least 1");
  for (const std::size_t b : o.bursts) {
    if (b == 0 || b > kMaxBurst) throw UserError(fmt::format("bench nf: --burst sizes must be in 1..{}", kMaxBurst));
  }
  std::ranges::sort(o.bursts);  // bursts of one first: the anchor of vs_per_packet
  // Names are checked before anything runs, so a typo fails at once rather than after minutes.
  const auto check = [](const std::vector<std::string>& asked, const std::vector<std::string>& known, std::string_view what) {
    for (const auto& name : asked) {
      if (std::ranges::find(known, name) == known.end()) throw UserError(fmt::format("bench nf: unknown {} '{}'", what, name));
    }
  };
  check(o.nfs, nf_names(), "function");
  for (const auto& table : o.tables) {
    if (!in_grid(table, GridUse::functions) || !table_concurrency(table)) {
      throw UserError(fmt::format("bench nf: {}", unknown_table_message(table, GridUse::functions)));
    }
  }
  check(o.agings, nf_aging_names(), "aging");
  check(o.scalings, nf_scaling_names(), "scaling");
  if (o.nat_sync_events && (std::ranges::find(o.nfs, "nat") == o.nfs.end() || std::ranges::find(o.agings, "wheel") == o.agings.end())) {
    throw UserError("bench nf: --nat-sync-events measures the NAT with the wheel aging: --nfs must hold nat, --agings wheel");
  }
  if (o.lb_sync_events && std::ranges::find(o.nfs, "lb") == o.nfs.end()) {
    throw UserError("bench nf: --lb-sync-events measures the stateful LB: --nfs must hold lb");
  }
  if (o.workers.empty()) {
    for (unsigned w = 1; w <= std::min(usable_cpus(), kMaxWorkers); ++w) o.workers.push_back(w);
  }
  for (const unsigned w : o.workers) check_workers("bench nf", w);
  CampusProfile profile;
  profile.flows = o.flows;
  if (o.connections != 0) o.windows = windows_for(o.flows, o.connections);
  const PacketStore trace = multiply_trace(generate_campus(profile), {.windows = o.windows});
  NfConfigs configs;
  configs.lb.services = campus_services(profile, o.own_backends);
  configs.lb.policy = LbPolicy::maglev;
  // Room for every connection of the trace twice over: the tables run at most half full, as a deployment
  // sizes them, and no connection is ever refused for room.
  configs.lb.max_connections = 2 * static_cast<std::size_t>(o.flows) * o.windows;
  configs.slb = {configs.lb.services, StatelessSelection::maglev, MaglevTable::kDefaultSize};
  // The campus clients are the inside network: window i moves them to 10.i.x.y (trace_multiplier.hpp),
  // so 10.0.0.0/8 holds every window's clients and every connection is translated.
  configs.nat.inside_network = to_network32(profile.client_network & 0xff000000u);
  configs.nat.inside_prefix_length = 8;
  // Paired pooling keeps each client on one public address, whose ports (of one protocol) are 64 K less
  // the quarantined ones: an address for every 16 K connections keeps every address well short of
  // running out, whatever the hash puts on it.
  const auto pool = std::clamp<std::size_t>(configs.lb.max_connections / 16384, 4, 254);
  for (std::uint32_t i = 1; i <= pool; ++i) configs.nat.pool.push_back(to_network32(0xcb007100 + i));  // 203.0.113.1-
  configs.nat.max_sessions = configs.lb.max_connections;
  configs.nat.max_mappings = configs.lb.max_connections;
  if (std::ranges::find(o.new_connection_rates, 0) == o.new_connection_rates.end()) o.new_connection_rates.push_back(0);
  std::ranges::sort(o.new_connection_rates);  // no limit first: the anchor
  // std::unique, not ranges::unique: clang does not take libstdc++ 12's subrange it returns.
  o.new_connection_rates.erase(std::unique(o.new_connection_rates.begin(), o.new_connection_rates.end()), o.new_connection_rates.end());
  // The same functions in each forwarding mode asked for: the services in a tunnel from one source.
  std::map<std::string, NfConfigs> configs_by_forward;
  const auto tunnelled = [&](ForwardMode mode) {
    NfConfigs c = configs;
    for (auto* services : {&c.lb.services, &c.slb.services}) {
      for (ServiceConfig& s : *services) s.tunnel = {.mode = mode, .source = to_network32(0x0ac8ff01)};  // 10.200.255.1
    }
    return c;
  };
  for (const std::string& forward : o.forwards) {
    if (forward == kNatOnTunnelPackets) continue;
    const auto mode = forward_mode_from_name(forward);
    if (!mode) throw UserError(fmt::format("bench nf: unknown forwarding mode '{}' (nat, ipip, gue, {})", forward, kNatOnTunnelPackets));
    configs_by_forward.emplace(forward, tunnelled(*mode));
  }
  if (!configs_by_forward.contains("nat")) configs_by_forward.emplace("nat", configs);
  // NAT mode on the packets a tunnel mode handles: where a tunnel mode is set against NAT mode, or asked
  // for by name. Which answers a tunnel leaves out does not depend on its kind: those of every service's
  // VIPs.
  const auto asked = [&](std::string_view forward) { return std::ranges::find(o.forwards, forward) != o.forwards.end(); };
  if (std::ranges::any_of(o.forwards, is_tunnel_mode) && asked("nat") && !asked(kNatOnTunnelPackets)) {
    o.forwards.emplace_back(kNatOnTunnelPackets);
  }
  const bool tunnel_packets_asked = asked(kNatOnTunnelPackets);
  const NfConfigs any_tunnel = tunnelled(ForwardMode::ipip);
  const PacketStore flooded =
      o.syn_flood == 0 ? PacketStore(trace.link_type()) : mix_syn_flood(trace, configs.lb.services, o.syn_flood);

  // Every configuration to measure, in the order printed: per worker count, the forwarder first (the
  // anchor of the ratios), then each function; the stateful ones by table, aging and scaling.
  std::vector<NfChoice> choices;
  for (const unsigned workers : o.workers) {
    for (const auto& name : o.nfs) {
      const NfKind nf = *nf_kind_from_name(name);
      if (nf == NfKind::concury) {  // no connection table; its control plane in each place asked for
        for (const auto& place : o.control_planes) choices.push_back({nf, "-", "-", "sharded", workers, place});
        continue;
      }
      if (nf == NfKind::fwd || nf == NfKind::slb) {  // no connection table of ours
        choices.push_back({nf, "-", "-", "sharded", workers});
        continue;
      }
      for (const auto& table : o.tables) {
        for (const auto& aging : o.agings) {
          for (const auto& scaling : o.scalings) {
            choices.push_back({nf, table, aging, scaling, workers});
            if (nf == NfKind::nat && o.nat_sync_events && aging == "wheel") {
              choices.push_back(choices.back());
              choices.back().nat_sync_events = true;
            }
            if (nf == NfKind::lb && o.lb_sync_events) {
              choices.push_back(choices.back());
              choices.back().lb_sync_events = true;
            }
          }
        }
      }
    }
  }
  if (o.json) {
    print_run_context(true);
  } else {
    fmt::print("flowtrack bench nf: campus {} connections x {} windows = {} packets, median of {} reps\n",
               o.flows, o.windows, trace.size(), o.reps);
    if (o.syn_flood != 0) fmt::print("  and the same with {} spoofed SYNs mixed in ({} packets)\n", o.syn_flood, flooded.size());
    fmt::print("\n{:<5} {:<12} {:<6} {:<9} {:>3} {:>5} {:>11} {:>5} {:>7} {:>8} {:>9} {:>8} {:>9} {:>9} {:>7}\n", "nf", "table",
               "aging", "scaling", "wrk", "burst", "fwd", "flood", "limit", "Mpps", "cyc/pkt", "vs fwd", "vs 1/bst", "live", "drops");
  }
  std::map<std::pair<unsigned, bool>, PacketPartition> partitions;  // by worker count and trace (flooded or not)
  // The same without the answers a tunnel mode's backends return directly, by function too (their
  // services may differ): kNatOnTunnelPackets' rows'.
  std::map<std::tuple<unsigned, bool, NfKind>, PacketPartition> tunnel_partitions;
  std::vector<NfRow> rows;
  for (const NfChoice& choice : choices) {
    for (const bool flood : {false, true}) {
      if (flood && o.syn_flood == 0) continue;
      const PacketStore& t = flood ? flooded : trace;
      if (!partitions.contains({choice.workers, flood})) {
        partitions.emplace(std::pair{choice.workers, flood}, partition_by_rss(t, RssSteering(choice.workers)));
      }
      if (forwards(choice.nf) && tunnel_packets_asked) {
        const auto& services = choice.nf == NfKind::slb ? any_tunnel.slb.services : any_tunnel.lb.services;
        PacketPartition clients = partitions.at({choice.workers, flood});
        leave_out_direct_returns(t, services, clients);
        tunnel_partitions.emplace(std::tuple{choice.workers, flood, choice.nf}, std::move(clients));
      }
      for (const std::string& forward : forwards(choice.nf) ? o.forwards : std::vector<std::string>{"-"}) {
        for (const std::uint64_t rate : choice.nf == NfKind::lb ? o.new_connection_rates : std::vector<std::uint64_t>{0}) {
          for (const std::size_t burst : o.bursts) rows.push_back({choice, burst, forward, flood, rate});
        }
      }
    }
  }
  const auto run = [&](const NfRow& row, const NfChoice& choice, ReplayOptions options) {
    const bool tunnel_packets = row.forward == kNatOnTunnelPackets;
    NfConfigs c = configs_by_forward.at(row.forward == "-" || tunnel_packets ? "nat" : row.forward);
    c.lb.new_connection_rate = row.rate;
    const PacketPartition& partition = tunnel_packets ? tunnel_partitions.at({choice.workers, row.flood, choice.nf})
                                                      : partitions.at({choice.workers, row.flood});
    const PacketStore& packets = row.flood ? flooded : trace;
    if (o.lb_sync_events && choice.nf == NfKind::lb) {
      // The drain that makes exceptions, the same in the rows with and without them.
      const ServiceConfig& first = c.lb.services.front();
      const PoolChange drain{static_cast<Nanos>(packets.duration_ns() / 2), first.name, PoolAction::drain, {first.backends.front().name, 0, 0, 0}};
      options.changes = PoolChangeSchedule({drain}, c.lb.services, c.lb.maglev_size);
    }
    return run_nf(choice, c, packets, partition, options);
  };
  // Repetition r of every row runs before repetition r + 1 of any, so that the rows a ratio compares (a
  // function and the forwarder, bursts and bursts of one) ran minutes apart at most, not a whole row's
  // repetitions apart: on a shared machine the neighbours' load moves in phases longer than a run.
  for (unsigned rep = 0; rep < o.reps; ++rep) {
    for (NfRow& row : rows) {
      const NfRun r = run(row, row.choice, {.burst = row.burst, .keep_output = false});
      row.mpps.push_back(aggregate_mpps(r.workers));
      row.cycles.push_back(cycles_per_packet(r.workers));
      row.live = 0;
      row.state_bytes = 0;
      row.handled = 0;
      for (const WorkerReport& w : r.workers) {
        row.live += w.peak_connections;
        row.handled += w.counters.packets;
        // One instance under a lock reports the same state to every worker: counted once.
        row.state_bytes = row.choice.scaling == "spinlock" ? std::max(row.state_bytes, w.state_bytes) : row.state_bytes + w.state_bytes;
      }
      row.drop_reasons = r.drops_by_reason();
      row.over_rate = 0;
      row.sync_events = 0;
      for (const WorkerReport& w : r.workers) {
        if (const auto it = w.function_counts.find("over_rate"); it != w.function_counts.end()) row.over_rate += it->second;
        if (const auto it = w.function_counts.find("sync_events"); it != w.function_counts.end()) row.sync_events += it->second;
      }
    }
  }
  // The limit probed once per working set: configurations of one table hold the same state.
  std::map<std::size_t, MemoryLimit> limits;
  const auto limit_of = [&](std::size_t bytes) -> const MemoryLimit& {
    if (!limits.contains(bytes)) {
      limits.emplace(bytes, probe_memory_limit({.working_set_bytes = std::max<std::size_t>(bytes, 4096),
                                                .batch = kDefaultBurst,
                                                .reps = static_cast<int>(o.reps)}));
    }
    return limits.at(bytes);
  };
  for (NfRow& row : rows) {
    const NfChoice& choice = row.choice;
    const std::size_t burst = row.burst;
    std::uint64_t drops = 0;
    for (const auto& [reason, n] : row.drop_reasons) drops += n;
    // The stage split is printed in JSON only: the text table leaves the extra run out.
    const bool split = o.stages && o.json;
    const NfRun clocked = split ? run(row, choice, {.burst = burst, .keep_output = false, .clock_stages = true}) : NfRun{};
    for (std::size_t s = 0; s < kNfStageCount && split; ++s) row.stage_cycles[s] = stage_cycles_per_packet(clocked.workers, static_cast<NfStage>(s));
    // Concury checked, in one more run: every connection one backend, none outside its pool.
    std::map<std::string, std::uint64_t> checked;
    if (choice.nf == NfKind::concury) {
      const Nanos handshake = configs.lb.timeouts.tcp_timeout(TcpState::syn_sent);
      for (const WorkerReport& w : run(row, choice, {.burst = burst, .keep_output = false, .check = handshake}).workers) {
        for (const auto& [name, n] : w.function_counts) checked[name] += n;
        checked["violations"] += w.check.violations;
        checked["false_hits"] += w.check.false_hits;
      }
    }
    const double mpps = median(row.mpps);
    const NfRow* fwd = find_row(rows, {NfKind::fwd, "-", "-", "sharded", choice.workers}, burst, "-", row.flood);
    const NfRow* per_packet = find_row(rows, choice, 1, row.forward, row.flood, row.rate);
    const Anchors anchors = anchors_of(rows, row);
    const double vs_fwd = fwd != nullptr ? paired_ratio(row, *fwd) : 0;
    const double vs_per_packet = per_packet != nullptr ? paired_ratio(row, *per_packet) : 0;
    const MemoryLimit* limit = row.state_bytes != 0 ? &limit_of(row.state_bytes) : nullptr;
    if (o.json) {
      JsonObject j;
      j.set("nf", nf_kind_name(choice.nf))
          .set("table", choice.table)
          .set("aging", choice.aging)
          .set("scaling", choice.scaling)
          .set("control_plane", choice.nf == NfKind::concury ? choice.control_plane : "-")
          .set("workers", choice.workers)
          .set("burst", burst)
          .set("mpps", mpps)
          .set("cycles_per_packet", median(row.cycles))
          .set("mpps_best", std::ranges::max(row.mpps))
          .set("cycles_per_packet_best", std::ranges::min(row.cycles))
          .set("cycles_per_packet_reps", row.cycles)
          .set("vs_fwd", vs_fwd)
          .set("vs_per_packet", vs_per_packet)
          .set("live_connections", row.live)
          .set("drops", drops)
          .set("drop_reasons", row.drop_reasons)
          .set("reps", o.reps)
          .set("packets", row.flood ? flooded.size() : trace.size())
          .set("packets_handled", row.handled)
          .set("own_backends", o.own_backends)
          .set("windows", o.windows)
          .set("forward", row.forward)
          .set("syn_flood", row.flood ? o.syn_flood : 0)
          .set("new_connection_rate", row.rate)
          .set("over_rate", row.over_rate)
          .set("nat_sync_events", choice.nat_sync_events)
          .set("lb_sync_events", choice.lb_sync_events)
          .set("sync_events", row.sync_events);
      if (limit != nullptr) j.set("line_fetches", median(row.cycles) / limit->batched_cycles_per_line).merge(memory_limit_fields(*limit));
      if (anchors.nat_mode != nullptr) j.set("cycles_vs_nat_mode", paired_cycles_ratio(row, *anchors.nat_mode));
      if (anchors.nat_same_packets != nullptr) {
        j.set("cycles_vs_nat_mode_same_packets", paired_cycles_ratio(row, *anchors.nat_same_packets));
      }
      if (anchors.nat_mode != nullptr && split && is_tunnel_mode(row.forward)) {
        j.set("cycles_vs_nat_mode_besides_rewrite", cycles_vs_nat_mode_besides_rewrite(row, *anchors.nat_mode));
      }
      if (anchors.no_limit != nullptr) j.set("cycles_vs_no_limit", paired_cycles_ratio(row, *anchors.no_limit));
      if (anchors.no_flood != nullptr) j.set("cycles_vs_no_flood", paired_cycles_ratio(row, *anchors.no_flood));
      if (anchors.no_sync_events != nullptr) j.set("cycles_vs_no_sync_events", paired_cycles_ratio(row, *anchors.no_sync_events));
      if (!checked.empty()) {
        j.set("violations", checked["violations"]).set("false_hits", checked["false_hits"]).set("repairs", checked["repairs"]);
        j.set("syncs", checked["syncs"]);
      }
      for (std::size_t s = 0; s < kNfStageCount && split; ++s) {
        j.set(fmt::format("cycles_{}", nf_stage_name(static_cast<NfStage>(s))), row.stage_cycles[s]);
      }
      j.print_line();
    } else {
      // Concury has no table: its column tells where its control plane learns.
      const std::string table = choice.nf == NfKind::concury ? "cp:" + choice.control_plane : choice.table;
      fmt::print("{:<5} {:<12} {:<6} {:<9} {:>3} {:>5} {:>11} {:>5} {:>7} {:>8.2f} {:>9.1f} {:>7.2f}x {:>8.2f}x {:>9} {:>7}\n",
                 nf_kind_name(choice.nf), table, choice.aging, choice.scaling, choice.workers, burst, row.forward,
                 row.flood ? "yes" : "no", row.rate != 0 ? std::to_string(row.rate) : "-", mpps, median(row.cycles), vs_fwd,
                 vs_per_packet, row.live, drops);
      if (limit != nullptr) {
        fmt::print("      {:.1f} batched line fetches a packet; memory limit over its state, {}\n",
                   median(row.cycles) / limit->batched_cycles_per_line, memory_limit_text(*limit));
      }
      if (choice.nat_sync_events) {
        fmt::print("      with its pair's sync events made (into a sink that discards them): {} events a run\n", row.sync_events);
      }
      if (choice.lb_sync_events) {
        fmt::print("      with its exceptions shared (into a sink that discards them): {} events a run\n", row.sync_events);
      }
      if (!checked.empty()) {
        fmt::print("      concury's check (one more run): {} violations, {} false hits, {} repairs, {} syncs\n",
                   checked["violations"], checked["false_hits"], checked["repairs"], checked["syncs"]);
      }
    }
    std::fflush(stdout);
  }
  if (o.json) return;
  print_summary(rows, o.workers.back(), o.bursts.back());
}

}  // namespace flowtrack::cli
