// A restart through the state file (state_store.hpp): a NAT saved at its stop and restored at the next
// start answers its connections through the same public endpoints, and an LB's connections keep their
// backends after a drain; a missing, truncated, corrupt or foreign file stops the start with its reason,
// unless the operator asks to start empty, when the run starts without state and keeps the file aside.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/runtime/state_store.hpp"
#include "nf/nat_frames.hpp"

namespace flowtrack {
namespace {

namespace frames = nat_frames;

constexpr std::int64_t kStopAt = 1'795'000'000'000'000'000;

// A directory of this test's own, removed at its end.
class StateDir {
 public:
  StateDir() : path_(std::filesystem::temp_directory_path() / ("flowtrack_state_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~StateDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The reason a start is refused, or "" when it is not.
std::string refusal_of(const StateFileOptions& o, const NatConfig& c, unsigned workers = 1) {
  try {
    load_nat_state(o, c, workers, kStopAt);
  } catch (const StateRefused& e) {
    return e.what();
  }
  return "";
}

TEST(StateStore, ARestoredNatAnswersItsConnectionsThroughTheSamePublicEndpoints) {
  const StateDir dir;
  const std::string path = dir.file("nat.state");
  NatConfig c = frames::config(NatFiltering::address_dependent);
  c.block_size = 64;
  std::vector<frames::Out> outs;
  {
    frames::Nat before(c, 0, 1);
    for (std::uint32_t host = 1; host <= 20; ++host) {
      const FlowKeyV4 key = FlowKeyV4::from_host(frames::kInside + host, frames::kRemote, 5000, 53, ipproto::kUdp);
      outs.push_back(frames::through(before, FrameSpec::udp4(key, 8), kNanosPerSecond));
    }
    const NatSnapshot saved[] = {before.snapshot(2 * kNanosPerSecond)};
    save_nat_state(path, saved, c, kStopAt);
  }
  // Down for three seconds.
  const StartingState<NatSnapshot> start = load_nat_state({path, false}, c, 1, kStopAt + 3 * kNanosPerSecond);
  ASSERT_EQ(start.workers.size(), 1u);
  EXPECT_NE(start.note.find("20 connections restored"), std::string::npos) << start.note;
  EXPECT_FALSE(std::filesystem::exists(path)) << "taken";
  EXPECT_TRUE(std::filesystem::exists(path + ".restored"));
  const auto after = std::make_unique<frames::Nat>(c, 0, 1, 50 * kNanosPerSecond);
  after->restore(start.workers[0], 50 * kNanosPerSecond);
  for (const frames::Out& out : outs) {
    // The remote answers the public endpoint it saw; the answer reaches the same inside host.
    const frames::Out answer = frames::through(*after, FrameSpec::udp4(out.key.reversed(), 8), 51 * kNanosPerSecond);
    ASSERT_EQ(answer.verdict, Verdict::forward);
    EXPECT_EQ(answer.key.dst_port, to_network16(5000));
  }
  EXPECT_EQ(after->mapping_count(), 20u);
  // A second start finds no file: the state was taken.
  EXPECT_NE(refusal_of({path, false}, c).find("no state file"), std::string::npos);
}

TEST(StateStore, ATruncatedCorruptOrForeignFileIsRefusedWithItsReason) {
  const StateDir dir;
  const std::string path = dir.file("nat.state");
  const NatConfig c = frames::config();
  frames::Nat nat(c, 0, 1);
  const FlowKeyV4 key = FlowKeyV4::from_host(frames::kInside + 1, frames::kRemote, 5000, 53, ipproto::kUdp);
  frames::through(nat, FrameSpec::udp4(key, 8), 0);
  const NatSnapshot saved[] = {nat.snapshot(kNanosPerSecond)};
  save_nat_state(path, saved, c, kStopAt);
  const std::vector<std::uint8_t> good = bytes_of(path);

  const auto refused_as = [&](std::span<const std::uint8_t> file, const NatConfig& into, unsigned workers, const std::string& reason) {
    write_bytes(path, file);
    const std::string refusal = refusal_of({path, false}, into, workers);
    EXPECT_NE(refusal.find(reason), std::string::npos) << refusal;
    EXPECT_NE(refusal.find("--start-empty"), std::string::npos) << "says what the operator may do";
    EXPECT_TRUE(std::filesystem::exists(path)) << "a refused file stays where it is";
  };
  refused_as(std::span(good).first(good.size() - 5), c, 1, "truncated");
  std::vector<std::uint8_t> corrupt = good;
  corrupt[corrupt.size() - 3] ^= 0x10;
  refused_as(corrupt, c, 1, "corrupt");
  NatConfig other_pool = c;
  other_pool.pool = {to_network32(0xc6336401)};
  refused_as(good, other_pool, 1, "another configuration");
  refused_as(good, c, 2, "another configuration");
  StatefulLbConfig lb;
  lb.services = {{"web", to_network32(0xc6120001), to_network16(80), ipproto::kTcp, {{"b1", to_network32(0x0a010001), 0, 1}}}};
  const LbSnapshot lb_saved[] = {LbSnapshot{}};
  save_lb_state(path, lb_saved, lb, kStopAt);
  refused_as(bytes_of(path), c, 1, "the state of lb, not of nat");
  const std::string text = "not a state file at all\n";
  refused_as(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), c, 1, "not a flowtrack state file");
}

TEST(StateStore, StartingEmptyIsTheOperatorsCallAndKeepsTheRefusedFile) {
  const StateDir dir;
  const std::string path = dir.file("nat.state");
  const NatConfig c = frames::config();
  EXPECT_NE(refusal_of({path, false}, c).find("no state file"), std::string::npos);
  const StartingState<NatSnapshot> first = load_nat_state({path, true}, c, 1, kStopAt);
  EXPECT_TRUE(first.workers.empty());
  EXPECT_NE(first.note.find("starting empty"), std::string::npos) << first.note;

  const std::string junk = "junk";
  write_bytes(path, std::span(reinterpret_cast<const std::uint8_t*>(junk.data()), junk.size()));
  const StartingState<NatSnapshot> refused = load_nat_state({path, true}, c, 1, kStopAt);
  EXPECT_TRUE(refused.workers.empty());
  EXPECT_NE(refused.note.find("not a flowtrack state file"), std::string::npos) << refused.note;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(bytes_of(path + ".refused").size(), junk.size()) << "kept for the operator";
  EXPECT_TRUE(load_nat_state({"", false}, c, 1, kStopAt).workers.empty()) << "no file asked for: nothing kept";
}

TEST(StateStore, AnLbsConnectionsKeepTheirBackendsAcrossARestartAfterADrain) {
  const StateDir dir;
  const std::string path = dir.file("lb.state");
  StatefulLbConfig c;
  c.services = {{"web", to_network32(0xc6120001), to_network16(80), ipproto::kTcp,
                 {{"b1", to_network32(0x0a010001), 0, 1}, {"b2", to_network32(0x0a010002), 0, 1}, {"b3", to_network32(0x0a010003), 0, 1}}}};
  c.policy = LbPolicy::round_robin;
  c.max_connections = 64;
  c.maglev_size = 401;
  using Lb = StatefulLb<CuckooTable<FlowKeyV4>>;
  std::vector<FlowKeyV4> clients;
  std::vector<std::uint32_t> backend_of;
  {
    Lb before(c);
    for (std::uint16_t port = 1; port <= 9; ++port) {
      const FlowKeyV4 key = FlowKeyV4::from_host(0x01020304, 0xc6120001, 30000 + port, 80, ipproto::kTcp);
      std::vector<std::uint8_t> frame = build_frame(FrameSpec::tcp4(key, tcpflag::kSyn));
      NfPacket packet{frame, {}, static_cast<std::uint32_t>(frame.size()), frame.size()};
      ASSERT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
      ASSERT_EQ(process_packet(before, packet, 0), Verdict::forward);
      ParsedPacket sent;
      ASSERT_EQ(parse_frame(frame, LinkType::ethernet, sent), ParseStatus::ok);
      clients.push_back(key);
      backend_of.push_back(sent.key4.dst_addr);
    }
    before.apply({.service = "web", .action = PoolAction::drain, .backend = {.name = "b2"}});
    const LbSnapshot saved[] = {before.snapshot(kNanosPerSecond)};
    save_lb_state(path, saved, c, kStopAt);
  }
  const StartingState<LbSnapshot> start = load_lb_state({path, false}, c, 1, kStopAt + kNanosPerSecond);
  ASSERT_EQ(start.workers.size(), 1u);
  Lb after(c);
  after.restore(start.workers[0], 0);
  EXPECT_EQ(after.services()[0].backends()[1].config.weight, 0u) << "the drain outlives the restart";
  for (std::size_t i = 0; i < clients.size(); ++i) {
    std::vector<std::uint8_t> frame = build_frame(FrameSpec::tcp4(clients[i], tcpflag::kAck));
    NfPacket packet{frame, {}, static_cast<std::uint32_t>(frame.size()), frame.size()};
    ASSERT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
    ASSERT_EQ(process_packet(after, packet, kNanosPerSecond), Verdict::forward);
    ParsedPacket sent;
    ASSERT_EQ(parse_frame(frame, LinkType::ethernet, sent), ParseStatus::ok);
    EXPECT_EQ(sent.key4.dst_addr, backend_of[i]) << "connection " << i << " keeps its backend, the drained one's too";
  }
}

}  // namespace
}  // namespace flowtrack
