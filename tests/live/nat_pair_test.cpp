// A live NAT pair's standby (runtime/nat_pair.hpp) over real UDP sockets on the loopback interface, its
// active played by the test with the library's NatSyncActive: the standby applies its active's whole
// state, counts a forged and a replayed datagram as refused without applying them, and takes over once
// the active goes silent; with role "active" and no peer it takes over alone, with role "standby" it
// waits for an active; an operator's takeover is refused while the active is alive and the copy not
// synchronised (no failback before the resync).
#include "flowtrack/runtime/nat_pair.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "flowtrack/runtime/dpdk_ports.hpp"
#include "flowtrack/runtime/state_store.hpp"
#include "support/addresses.hpp"

namespace flowtrack {
namespace {

// Ports of their own per test process, so that two test binaries at once do not share them.
std::uint16_t test_port(unsigned n) { return static_cast<std::uint16_t>(20000 + (::getpid() % 10000) * 4 + n); }

PairConfig pair_of(PairConfig::Role role, std::uint16_t local, std::uint16_t peer) {
  PairConfig c;
  c.role = role;
  c.local = {test::ipv4("127.0.0.1"), local};
  c.peer = {test::ipv4("127.0.0.1"), peer};
  c.dead_interval = 400 * kNanosPerMilli;
  return c;
}

const SyncKey& pair_key() {
  static const SyncKey key(std::vector<std::uint8_t>(32, 0x3c));
  return key;
}

// The active, played on a thread of its own for `speak`: it answers hellos with the whole (empty) state
// when `resync`, heartbeats, and hands each datagram it sends to `sent` too. Then it falls silent.
class PlayedActive {
 public:
  PlayedActive(const PairConfig& standby, Nanos speak, bool resync, std::function<void(const std::vector<std::uint8_t>&)> sent = {})
      : socket_(standby.peer, standby.local), thread_([this, speak, resync, sent = std::move(sent)] {
          NatSyncActive active(pair_key(), static_cast<std::uint64_t>(unix_now_ns()), pair_timers(pair_of(PairConfig::Role::active, 0, 0)));
          Datagrams out;
          const Nanos until = DpdkPorts::now() + speak;
          while (DpdkPorts::now() < until && !done_.load()) {
            socket_.receive(5 * kNanosPerMilli, [&](std::span<const std::uint8_t> d) { active.receive(d, DpdkPorts::now()); });
            if (active.take_resync_request() && resync) {
              active.begin_resync(1);
              active.queue(SyncResyncEnd{});
            }
            active.poll(DpdkPorts::now(), out);
            for (const auto& d : out) {
              if (sent) sent(d);
            }
            socket_.send(out);
            out.clear();
          }
        }) {}
  ~PlayedActive() {
    done_ = true;
    thread_.join();
  }

 private:
  SyncSocket socket_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

struct StandbyRun {
  CounterBoard published;
  PairBoard board;
  std::atomic<bool> stop{false};
};

TEST(NatPair, AStandbyHoldsItsActivesStateRefusesForgedAndReplayedDatagramsAndTakesOverWhenItGoesSilent) {
  const PairConfig config = pair_of(PairConfig::Role::standby, test_port(0), test_port(1));
  SyncSocket socket(config.local, config.peer);
  StandbyRun run;
  std::vector<std::uint8_t> first_sent;
  std::mutex first_mutex;
  PlayedActive active(config, 600 * kNanosPerMilli, true, [&](const std::vector<std::uint8_t>& d) {
    const std::lock_guard lock(first_mutex);
    if (first_sent.empty()) first_sent = d;
  });
  // An attacker on the management link: a datagram under another key, then a copy of one the active sent.
  std::thread attacker([&] {
    SyncSocket from({test::ipv4("127.0.0.1"), test_port(2)}, config.local);
    const SyncKey other(std::vector<std::uint8_t>(32, 0x99));
    from.send({seal_sync_message({SyncType::heartbeat, std::uint64_t{1} << 62, 1, 0, 0}, {}, other)});
    for (int i = 0; i < 100; ++i) {
      {
        const std::lock_guard lock(first_mutex);
        if (!first_sent.empty()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the original is taken by now
          from.send({first_sent});
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  const std::optional<Takeover> t = stand_by(config, pair_key(), 1, 0, socket, nullptr, run.published, run.board, run.stop);
  attacker.join();
  ASSERT_TRUE(t);
  EXPECT_NE(t->reason.find("the active went silent"), std::string::npos) << t->reason;
  EXPECT_EQ(t->reason.find("not synchronised"), std::string::npos) << t->reason;
  ASSERT_EQ(t->workers.size(), 1u);
  EXPECT_EQ(t->sessions, 0u);
  EXPECT_EQ(t->figures.takeovers, 1u);
  EXPECT_GE(t->figures.events_applied, 2u) << "resync_begin and resync_end";
  EXPECT_EQ(t->figures.refused.at("forged"), 1u);
  EXPECT_GE(t->figures.refused.at("replayed"), 1u);
  EXPECT_EQ(t->figures.refused.count("malformed"), 0u);
  EXPECT_EQ(run.board.read().role, "standby");
  EXPECT_EQ(run.published.read().pair.refused.at("forged"), 1u) << "the counters' readers see the standby's figures";
}

TEST(NatPair, WithNoPeerTheActiveRoleTakesOverAloneAndTheStandbyRoleWaits) {
  {
    const PairConfig config = pair_of(PairConfig::Role::active, test_port(0), test_port(1));
    SyncSocket socket(config.local, config.peer);
    StandbyRun run;
    const std::optional<Takeover> t = stand_by(config, pair_key(), 2, 0, socket, nullptr, run.published, run.board, run.stop);
    ASSERT_TRUE(t);
    EXPECT_NE(t->reason.find("no active answered"), std::string::npos) << t->reason;
    EXPECT_EQ(t->workers.size(), 2u);
  }
  const PairConfig config = pair_of(PairConfig::Role::standby, test_port(0), test_port(1));
  SyncSocket socket(config.local, config.peer);
  StandbyRun run;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // three dead intervals
    run.stop = true;
  });
  EXPECT_FALSE(stand_by(config, pair_key(), 1, 0, socket, nullptr, run.published, run.board, run.stop)) << "it took over with no active heard";
  stopper.join();
  EXPECT_GT(run.board.read().messages_sent, 0u) << "it asked for everything meanwhile";
}

TEST(NatPair, AnOperatorsTakeoverWaitsForTheResyncWhileTheActiveIsAlive) {
  const PairConfig config = pair_of(PairConfig::Role::standby, test_port(0), test_port(1));
  SyncSocket socket(config.local, config.peer);
  const std::string path = (std::filesystem::temp_directory_path() / ("flowtrack-pair-" + std::to_string(::getpid()) + ".sock")).string();
  ControlSocket control(path, "");
  StandbyRun run;
  std::string refused, taken;
  {
    // An active that heartbeats but never sends its whole state.
    PlayedActive active(config, 5 * kNanosPerSecond, false);
    std::thread operator_([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      refused = control_call(path, "takeover");
      run.stop = true;
    });
    EXPECT_FALSE(stand_by(config, pair_key(), 1, 0, socket, &control, run.published, run.board, run.stop));
    operator_.join();
  }
  EXPECT_NE(refused.find("error: the active is alive and this standby's copy is not synchronised"), std::string::npos) << refused;
  // With no active heard (a socket of its own, which the played active's last datagrams do not reach),
  // the operator's word is enough.
  const PairConfig alone = pair_of(PairConfig::Role::standby, test_port(3), test_port(1));
  SyncSocket alone_socket(alone.local, alone.peer);
  run.stop = false;
  std::thread operator_([&] { taken = control_call(path, "takeover"); });
  const std::optional<Takeover> t = stand_by(alone, pair_key(), 1, 0, alone_socket, &control, run.published, run.board, run.stop);
  operator_.join();
  EXPECT_EQ(taken, "ok: taking over");
  ASSERT_TRUE(t);
  EXPECT_NE(t->reason.find("ctl takeover"), std::string::npos) << t->reason;
}

}  // namespace
}  // namespace flowtrack
