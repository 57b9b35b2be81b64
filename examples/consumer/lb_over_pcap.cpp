// A program built on the installed flowtrack package: the stateful load balancer over a capture, in
// the data plane's bursts, writing what it forwards (rewritten) to a new capture.
//
//   lb_over_pcap CONFIG.toml IN.pcap OUT.pcap
//
// CONFIG is the balancer's configuration as `flowtrack run --nf lb` reads it (examples/lb.toml). On a
// capture of the clients' packets to the services, OUT is what `flowtrack run --nf lb --config CONFIG
// --in IN --out OUT` writes: the package's test (tests/package/consumer_test.py) compares them.
#include <flowtrack/io/packet_store.hpp>
#include <flowtrack/nf/nf_config.hpp>
#include <flowtrack/nf/stateful_lb.hpp>
#include <flowtrack/runtime/burst_loop.hpp>
#include <flowtrack/runtime/replay_source.hpp>
#include <flowtrack/table/cuckoo.hpp>
#include <flowtrack/version.hpp>

#include <cstdio>
#include <exception>
#include <numeric>
#include <vector>

using namespace flowtrack;

// The burst loop's output: each packet the balancer forwards, as it left it, into a capture.
struct Forwarded {
  PacketStore packets;
  void verdict(const NfPacket& packet, Verdict verdict) {
    if (verdict == Verdict::forward || verdict == Verdict::reply) packets.append(packet.frame, packet.time, packet.wire_length);
  }
  void held(std::span<const std::uint8_t>, std::uint32_t) {}  // the balancer holds no packet back
  void stage_done(NfStage) {}
};

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "flowtrack %s: usage: %s CONFIG.toml IN.pcap OUT.pcap\n", FLOWTRACK_VERSION, argv[0]);
    return 2;
  }
  try {
    const StatefulLbConfig config = load_stateful_lb_config(argv[1]);
    const PacketStore trace = PacketStore::load_pcap(argv[2]);
    std::vector<std::uint32_t> order(trace.size());
    std::iota(order.begin(), order.end(), 0u);
    ReplaySource source(trace, order);  // every packet in a writable buffer, as a NIC hands them over

    StatefulLb<CuckooTable<FlowKeyV4>> lb(config, source.first_time());
    Forwarded out{PacketStore(trace.link_type())};
    BurstLoopCounters counters;
    StageClock no_stage_clock(false);
    run_burst_loop(lb, source, out, kDefaultBurst, counters, no_stage_clock);

    out.packets.save_pcap(argv[3]);
    std::printf("%llu packets in, %zu forwarded, %llu connections\n", static_cast<unsigned long long>(counters.packets),
                out.packets.size(), static_cast<unsigned long long>(lb.counters().connections_created));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lb_over_pcap: %s\n", e.what());
    return 1;
  }
}
