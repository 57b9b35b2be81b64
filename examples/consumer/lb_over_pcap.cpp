// A program built on the installed flowtrack package, as the author of a load balancer writes one: a
// stateful load balancer configured in code, run by the engine on two workers over a capture; what it
// forwards goes to a new capture, and what each worker counted to the standard output.
//
//   lb_over_pcap IN.pcap OUT.pcap
//
// The service: TCP ports 443 and 80 of 198.18.0.1 to .4 (the servers of `flowtrack trace gen --profile
// campus`), three backends chosen by Maglev, a fourth added 0.3 s into the trace. The package's test
// (tests/package/consumer_test.py) checks that OUT is what `flowtrack run --nf lb --workers 2` writes
// with the same configuration in TOML.
#include <flowtrack/nf/stateful_lb.hpp>
#include <flowtrack/runtime/replay_run.hpp>
#include <flowtrack/runtime/rss_steering.hpp>
#include <flowtrack/runtime/sharing.hpp>
#include <flowtrack/table/cuckoo.hpp>
#include <flowtrack/version.hpp>

#include <cstdio>
#include <exception>
#include <memory>

using namespace flowtrack;

// a.b.c.d in network order, as the configuration holds addresses.
constexpr std::uint32_t ipv4(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return to_network32(a << 24 | b << 16 | c << 8 | d);
}

StatefulLbConfig web_balancer() {
  ServiceConfig web;  // forwarded in NAT mode (its `tunnel`'s default), without health checks (`health`)
  web.name = "web";
  web.protocol = ipproto::kTcp;
  web.backends = {{"web-1", ipv4(10, 200, 0, 1), to_network16(8080), 2},
                  {"web-2", ipv4(10, 200, 0, 2), to_network16(8080), 1},
                  {"web-3", ipv4(10, 200, 0, 3), to_network16(8080), 1}};
  StatefulLbConfig config;  // Maglev, conntrack's timeouts, 2^20 connections per worker
  for (std::uint32_t host = 1; host <= 4; ++host) {
    for (const std::uint16_t port : {443, 80}) {
      // One service per VIP and port; a pool change applies to every service of its name.
      web.vip = ipv4(198, 18, 0, host);
      web.port = to_network16(port);
      config.services.push_back(web);
    }
  }
  config.changes.push_back({.at = 300 * kNanosPerMilli, .service = "web", .action = PoolAction::add,
                            .backend = {"web-4", ipv4(10, 200, 0, 4), to_network16(8080), 2}});
  return config;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "flowtrack %s: usage: %s IN.pcap OUT.pcap\n", FLOWTRACK_VERSION, argv[0]);
    return 2;
  }
  try {
    const StatefulLbConfig config = web_balancer();
    const PacketStore trace = PacketStore::load_pcap(argv[1]);
    constexpr unsigned kWorkers = 2;
    // Each connection to one worker, as a NIC's RSS with the symmetric key spreads them over its queues.
    const PacketPartition partition = partition_by_rss(trace, RssSteering(kWorkers));
    // One balancer per worker, made on the worker's own thread; nothing shared between them.
    OnePerWorker balancers(
        [&](unsigned, unsigned, Nanos start) { return std::make_unique<StatefulLb<CuckooTable<FlowKeyV4>>>(config, start); },
        kWorkers);
    ReplayOptions options;  // bursts of 32; the pool changes reach each worker's balancer between bursts
    options.changes = PoolChangeSchedule(config.changes, config.services, config.maglev_size);

    // What the report keeps of each worker's balancer once the run is over: its connections by backend.
    const auto count_backends = [](const auto& lb, WorkerReport& report) {
      for (const Service& service : lb.services()) {
        for (const Backend& backend : service.backends()) report.backends[backend.config.name] += backend.total_connections;
      }
    };
    const auto reports = replay(trace, partition, balancers, options, count_backends);
    merge_in_time_order(reports, trace.link_type()).save_pcap(argv[2]);

    for (unsigned w = 0; w < kWorkers; ++w) {
      const WorkerCounters& c = reports[w].counters;
      std::printf("worker %u: %llu packets, %llu rewritten, %llu passed, %llu dropped, %llu connections\n", w,
                  static_cast<unsigned long long>(c.packets), static_cast<unsigned long long>(c.function.rewritten),
                  static_cast<unsigned long long>(c.function.passed), static_cast<unsigned long long>(c.drops()),
                  static_cast<unsigned long long>(c.function.connections_created));
      for (const auto& [backend, connections] : reports[w].backends) {
        std::printf("  %s: %llu connections\n", backend.c_str(), static_cast<unsigned long long>(connections));
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lb_over_pcap: %s\n", e.what());
    return 1;
  }
}
