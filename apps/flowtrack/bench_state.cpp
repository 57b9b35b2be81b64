// One function instance (cuckoo table, timer wheel) is filled with `connections` connections by their
// first packets (UDP through the NAT, each inside endpoint to four remotes; TCP SYNs through the LB),
// untimed but for the anchor. Then, `reps` times: save (snapshot, encode, write and fsync the file) and
// restore (read the file, decode, restore into a fresh instance), each timed on the wall clock and split
// by step; the medians are reported. The anchor, measured in the same run: the time the first packets
// took to make the same connections, which is what a restart without state would cost the function
// (without the cost to the clients, whose connections would break).
#include "bench_state.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <unistd.h>

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/state_config_hash.hpp"
#include "flowtrack/nf/state_file.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/util/tsc.hpp"
#include "json_line.hpp"
#include "run_context.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

using Nat = Nat44<CuckooTable<FlowKeyV4>>;
using Lb = StatefulLb<CuckooTable<FlowKeyV4>>;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Each inside endpoint talks to this many remotes: sessions per mapping.
constexpr std::size_t kRemotesPerEndpoint = 4;

NatConfig nat_config(std::size_t connections) {
  NatConfig c;
  c.inside_network = to_network32(0x0a000000);
  c.inside_prefix_length = 8;
  const std::size_t mappings = connections / kRemotesPerEndpoint + 1;
  for (std::uint32_t i = 0; i < mappings / 60000 + 1; ++i) c.pool.push_back(to_network32(0xcb007101 + i));
  c.max_sessions = connections;
  c.max_mappings = mappings;
  return c;
}

StatefulLbConfig lb_config(std::size_t connections) {
  StatefulLbConfig c;
  ServiceConfig web{"web", to_network32(0xc6120001), to_network16(443), ipproto::kTcp, {}};
  for (std::uint32_t b = 1; b <= 3; ++b) web.backends.push_back({fmt::format("b{}", b), to_network32(0x0a640000 + b), to_network16(8443), 1});
  c.services = {web};
  c.max_connections = connections;
  return c;
}

// Connection i's first packet.
FrameSpec nat_first_packet(std::size_t i) {
  const std::size_t endpoint = i / kRemotesPerEndpoint;
  const auto host = static_cast<std::uint32_t>(endpoint / 16 + 1);
  const auto port = static_cast<std::uint16_t>(20000 + endpoint % 16);
  return FrameSpec::udp4(FlowKeyV4::from_host(0x0a000000 + host, 0x08080800 + static_cast<std::uint32_t>(i % kRemotesPerEndpoint), port, 53,
                                              ipproto::kUdp),
                         8);
}
FrameSpec lb_first_packet(std::size_t i) {
  return FrameSpec::tcp4(FlowKeyV4::from_host(0x0a000000 + static_cast<std::uint32_t>(i / 50000 + 1), 0xc6120001,
                                              static_cast<std::uint16_t>(10000 + i % 50000), 443, ipproto::kTcp),
                         tcpflag::kSyn);
}

// The first packets of every connection through `nf`, in bursts of 32; the seconds it took.
template <class Nf, class FirstPacket>
double fill(Nf& nf, std::size_t connections, FirstPacket&& first_packet) {
  constexpr std::size_t kBurst = 32;
  std::vector<std::vector<std::uint8_t>> frames(kBurst);
  std::vector<NfPacket> burst(kBurst);
  struct Sink {
    void verdict(const NfPacket&, Verdict) {}
    void held(std::span<const std::uint8_t>, std::uint32_t) {}
    void stage_done(NfStage) {}
  } sink;
  double busy = 0;
  for (std::size_t i = 0; i < connections; i += kBurst) {
    const std::size_t n = std::min(kBurst, connections - i);
    for (std::size_t k = 0; k < n; ++k) {
      frames[k] = build_frame(first_packet(i + k));
      NfPacket& p = burst[k];
      p = NfPacket{frames[k], {}, static_cast<std::uint32_t>(frames[k].size()), frames[k].size()};
      parse_frame(p.frame, LinkType::ethernet, p.parsed);
      p.time = kNanosPerSecond;
      p.hash = packet_hash(p.parsed);
    }
    const auto start = std::chrono::steady_clock::now();
    nf.process_burst(std::span(burst).first(n), sink);
    busy += seconds_since(start);
  }
  return busy;
}

struct Timings {
  std::vector<double> snapshot, encode, write, read, decode, restore;
  std::size_t bytes = 0, restored = 0;
};

template <class Nf, class Snapshot, class Encode, class Decode, class Count>
Timings time_state(const Nf& nf, const std::function<std::unique_ptr<Nf>()>& fresh, const std::string& path, unsigned reps,
                   Encode&& encode, Decode&& decode, Count&& count) {
  Timings t;
  for (unsigned rep = 0; rep < reps; ++rep) {
    auto start = std::chrono::steady_clock::now();
    const std::vector<Snapshot> workers{nf.snapshot(2 * kNanosPerSecond)};
    t.snapshot.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    const std::vector<std::uint8_t> bytes = encode(workers);
    t.encode.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    write_state_file(path, bytes);
    t.write.push_back(seconds_since(start));
    t.bytes = bytes.size();

    std::unique_ptr<Nf> restored = fresh();  // a new process makes its instance before it reads its state
    start = std::chrono::steady_clock::now();
    const std::vector<std::uint8_t> read = read_state_file(path);
    t.read.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    const auto state = decode(read);
    t.decode.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    restored->restore(state.workers.at(0), 3 * kNanosPerSecond);
    t.restore.push_back(seconds_since(start));
    t.restored = count(*restored);
  }
  return t;
}

void report(const std::string& nf, std::size_t connections, double fill_seconds, const Timings& t, const StateBenchOptions& o) {
  const double save = median(t.snapshot) + median(t.encode) + median(t.write);
  const double load = median(t.read) + median(t.decode) + median(t.restore);
  if (o.json) {
    JsonObject()
        .set("nf", nf)
        .set("connections", connections)
        .set("restored", t.restored)
        .set("bytes", t.bytes)
        .set("save_s", save)
        .set("restore_s", load)
        .set("snapshot_s", median(t.snapshot))
        .set("encode_s", median(t.encode))
        .set("write_s", median(t.write))
        .set("read_s", median(t.read))
        .set("decode_s", median(t.decode))
        .set("restore_only_s", median(t.restore))
        .set("first_packets_s", fill_seconds)
        .set("restore_vs_first_packets", load / fill_seconds)
        .set("reps", o.reps)
        .print_line();
    return;
  }
  fmt::print("{:<4} {:>10} connections, file {:.1f} MB: save {:.3f} s (snapshot {:.3f}, encode {:.3f}, write+fsync {:.3f}), "
             "restore {:.3f} s (read {:.3f}, decode {:.3f}, restore {:.3f}); their first packets took {:.3f} s (restore / first "
             "packets: {:.2f})\n",
             nf, connections, static_cast<double>(t.bytes) / 1e6, save, median(t.snapshot), median(t.encode), median(t.write), load,
             median(t.read), median(t.decode), median(t.restore), fill_seconds, load / fill_seconds);
}

}  // namespace

void run_state_bench(const StateBenchOptions& o) {
  if (o.connections == 0 || o.connections > (std::size_t{1} << 26)) throw UserError("bench state: --connections must be in 1..2^26");
  if (o.reps == 0) throw UserError("bench state: --reps must be at least 1");
  for (const std::string& nf : o.nfs) {
    if (nf != "nat" && nf != "lb") throw UserError(fmt::format("bench state: unknown function '{}' (nat, lb)", nf));
  }
  const std::string path = !o.path.empty() ? o.path
                                           : (std::filesystem::temp_directory_path() / fmt::format("flowtrack-bench-state-{}", ::getpid())).string();
  if (o.json) {
    print_run_context(false);
  } else {
    fmt::print("flowtrack bench state: one instance (cuckoo, wheel), state file {}, median of {} reps\n", path, o.reps);
  }
  for (const std::string& nf : o.nfs) {
    if (nf == "nat") {
      const NatConfig c = nat_config(o.connections);
      Nat nat(c, 0, 1);
      const double filled = fill(nat, o.connections, nat_first_packet);
      const Timings t = time_state<Nat, NatSnapshot>(
          nat, [&] { return std::make_unique<Nat>(c, 0, 1); }, path, o.reps,
          [&](const std::vector<NatSnapshot>& w) { return encode_nat_state(w, nat_state_hash(c, 1), 0); },
          [&](const std::vector<std::uint8_t>& b) { return decode_nat_state(b, nat_state_hash(c, 1)); },
          [](const Nat& n) { return n.sessions().size(); });
      report(nf, nat.sessions().size(), filled, t, o);
    } else {
      const StatefulLbConfig c = lb_config(o.connections);
      Lb lb(c);
      const double filled = fill(lb, o.connections, lb_first_packet);
      const Timings t = time_state<Lb, LbSnapshot>(
          lb, [&] { return std::make_unique<Lb>(c); }, path, o.reps,
          [&](const std::vector<LbSnapshot>& w) { return encode_lb_state(w, lb_state_hash(c, 1), 0); },
          [&](const std::vector<std::uint8_t>& b) { return decode_lb_state(b, lb_state_hash(c, 1)); },
          [](const Lb& l) { return l.tracker().size(); });
      report(nf, lb.tracker().size(), filled, t, o);
    }
    std::fflush(stdout);
  }
  std::filesystem::remove(path);
}

}  // namespace flowtrack::cli
