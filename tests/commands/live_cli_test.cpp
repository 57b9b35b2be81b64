// `flowtrack run --dpdk` and `flowtrack ctl` as a user runs them, on net_null ports (no root, no NIC):
// every mistake is one error line and exit status 2, never a crash; a run stops on SIGTERM with its
// report and every mbuf back in its pool; `ctl save-state` writes a live NAT's state file as it runs;
// a hand-over to a new process is refused safely or made whole.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

using testing::run_cli;

constexpr const char* kNullPort = R"([dataplane]
[[dataplane.port]]
device = "net_null0"
address = "10.9.0.1/24"
)";
constexpr const char* kEal = "--no-huge --no-pci --no-shconf --no-telemetry -l 0 -m 128 --log-level=error";

TEST(LiveCli, RunNeedsATraceOrPorts) {
  const auto r = run_cli("run --nf fwd");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--in FILE (a trace) or --dpdk"), std::string::npos) << r.output;
}

TEST(LiveCli, BadEalArgumentsAreOneError) {
  const std::string config = test::temp_config("null.toml", kNullPort);
  const auto r = run_cli("run --nf fwd --config " + config + " --dpdk '--no-huge --no-such-eal-option'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("flowtrack: error: run: DPDK EAL initialisation failed on '--no-huge --no-such-eal-option'"),
            std::string::npos)
      << r.output;
}

TEST(LiveCli, APortEalDoesNotHaveIsNamed) {
  const std::string config = test::temp_config("null.toml", kNullPort);
  const auto r = run_cli("run --nf fwd --config " + config + " --dpdk '" + kEal + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no DPDK port named 'net_null0'"), std::string::npos) << r.output;
}

TEST(LiveCli, AConfigurationWithoutPortsIsNamed) {
  const std::string config = test::temp_config("lb.toml", "[lb]\n");
  const auto r = run_cli("run --nf fwd --config " + config + " --dpdk '" + kEal + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("dataplane: missing"), std::string::npos) << r.output;
}

// `extra` on flowtrack's command line; the JSON report of a run on net_null stopped by SIGTERM. The
// shell runs flowtrack in the background, waits for its "flowtrack live: nf" line (printed once the
// signal handlers are in place and the workers start: EAL set-up alone can take over a second on a
// loaded machine, and a signal before the handlers would kill the run without its report), lets it
// forward for half a second, stops it and waits for it: its exit status is the command's. A log of
// its own per run: the background command empties its log only once it starts, and a line left by an
// earlier run would be taken for this one's.
nlohmann::json stopped_run(const std::string& extra) {
  static int runs = 0;
  const std::string config = test::temp_config("null.toml", kNullPort);
  const std::string log = config + "." + std::to_string(++runs) + ".log";
  const auto r = run_cli("run --nf fwd --json --config " + config + " " + extra + " --dpdk '" + kEal +
                         " --vdev=net_null0' > " + log + " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q 'flowtrack live: nf' " +
                         log + " && break; sleep 0.05; done; sleep 0.5; kill -TERM $pid; wait $pid; status=$?; cat " + log +
                         "; exit $status");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json report = testing::first_json_object(r.output);
  EXPECT_FALSE(report.is_null()) << r.output;
  return report;
}

TEST(LiveCli, StopsOnSigtermWithItsReportAndEveryMbufBack) {
  const nlohmann::json report = stopped_run("");
  ASSERT_FALSE(report.is_null());
  EXPECT_EQ(report["mbufs_missing"], 0);
  EXPECT_GT(report["packets_in"].get<std::uint64_t>(), 0u);  // net_null's frames, not IPv4: dropped, counted
  EXPECT_EQ(report["drops"]["not_ipv4"], report["packets_in"]);
}

// Two workers, each polling its own RX queue: every one stops on the signal, their counters are summed,
// and every mbuf is back.
TEST(LiveCli, TwoWorkersStopTogetherWithOneReportAndEveryMbufBack) {
  const nlohmann::json report = stopped_run("--workers 2");
  ASSERT_FALSE(report.is_null());
  EXPECT_EQ(report["workers"], 2);
  EXPECT_EQ(report["mbufs_missing"], 0);
  EXPECT_GT(report["packets_in"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(report["drops"]["not_ipv4"], report["packets_in"]);
}

// A live NAT's configuration on two net_null ports with a control socket at `socket`, its pool `pool`.
std::string nat_config(const std::string& name, const std::string& socket, const std::string& pool) {
  return test::temp_config(name + ".toml", fmt::format(R"([nat]
inside = "10.9.0.0/24"
pool = ["{}"]
[dataplane]
control_socket = "{}"
[[dataplane.port]]
device = "net_null0"
address = "10.9.0.1/24"
role = "inside"
[[dataplane.port]]
device = "net_null1"
address = "10.9.1.1/24"
role = "outside"
)",
                                                       pool, socket));
}

// A live NAT on two net_null ports with a control socket (the files under `dir`, named after `name`),
// running in the background while `script` runs (a shell script that may use $cli, $socket, $state and
// $dir), then stopped by SIGTERM: the output of the whole exchange (the script's, then the run's log).
// With `with_state`, the run keeps a state file (--state FILE --start-empty); without, none.
testing::CliResult nat_run_beside(const std::string& name, bool with_state, const std::string& script) {
  const std::filesystem::path dir = std::filesystem::path(test::temp_config(name + ".toml", "")).parent_path();
  const std::string socket = (dir / (name + ".sock")).string(), state = (dir / (name + ".state")).string();
  const std::string config = nat_config(name, socket, "10.9.1.100");
  const std::string log = (dir / (name + ".log")).string();
  const std::string cli = FLOWTRACK_CLI_PATH;
  return run_cli("run --nf nat --json --config " + config + (with_state ? " --state " + state + " --start-empty" : "") + " --dpdk '" +
                 kEal + " --vdev=net_null0 --vdev=net_null1' > " + log + " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q " +
                 "'flowtrack live: nf' " + log + " && break; sleep 0.05; done; cli=" + cli + " socket=" + socket + " state=" + state +
                 " dir=" + dir.string() + "; " + script + "; kill -TERM $pid 2> /dev/null; wait $pid; status=$?; cat " + log +
                 "; exit $status");
}

testing::CliResult nat_run_asked_to_save(const std::string& name, bool with_state) {
  return nat_run_beside(name, with_state,
                        "$cli ctl --socket $socket save-state 2>&1; echo \"ctl status $?\"; test -s $state && echo 'state file there'");
}

TEST(LiveCli, SaveStateWritesTheStateFileWhileTheRunGoesOn) {
  const auto r = nat_run_asked_to_save("saved", true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ok: state of 0 connections written to "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ctl status 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("state file there"), std::string::npos) << r.output;
}

TEST(LiveCli, SaveStateWithoutAStateFileIsAnErrorReply) {
  const auto r = nat_run_asked_to_save("unsaved", false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nf nat keeps no state file here (nat and lb, run with --state FILE)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ctl status 1"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("state file there"), std::string::npos) << r.output;
}

// The running process's side of a hand-over (runtime/hand_over.hpp), asked by hand: `hand-over` pauses
// it and writes its state; a second one while paused is refused; `hand-over-abort` resumes it; a commit
// with no hand-over under way is refused; a hand-over nobody commits ends by itself (the patience, 3 s)
// and its late commit is refused; the run then stops as usual, writing its state.
TEST(LiveCli, AHandOverNotCommittedLeavesTheRunForwarding) {
  const auto r = nat_run_beside("paused", true,
                                "for request in hand-over hand-over hand-over-abort hand-over-commit hand-over; do "
                                "echo \"$request: $($cli ctl --socket $socket $request 2>&1)\"; done; sleep 3.5; "
                                "echo \"late commit: $($cli ctl --socket $socket hand-over-commit 2>&1)\"; "
                                "echo \"counters: $($cli ctl --socket $socket counters 2>&1 | head -c 10)\"");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("hand-over: ok: paused; state of 0 connections written to "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hand-over: flowtrack: error: ctl: a hand-over is under way already"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hand-over-abort: ok: forwarding again"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hand-over-commit: flowtrack: error: ctl: no hand-over under way"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no commit within the patience: forwarding again"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("late commit: flowtrack: error: ctl: no hand-over under way"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("counters: {\"nf\":\"nat"), std::string::npos) << r.output;
  const nlohmann::json report = testing::first_json_object(r.output.substr(r.output.find("flowtrack live: nf")));
  ASSERT_FALSE(report.is_null()) << r.output;
  EXPECT_EQ(report["mbufs_missing"], 0);
}

// A new process taking over (`run --state FILE --take-over`): one whose configuration the state does not
// fit (another pool) is refused with the state file's reason, exit status 2, and the running process
// forwards on (it answers, it was told to resume); one whose configuration fits takes over, and the
// running one stops with its report (status 0) without writing its state again.
TEST(LiveCli, TakeOverRefusesAnotherConfigurationThenTakesOver) {
  const std::filesystem::path dir = std::filesystem::path(test::temp_config("taker.toml", "")).parent_path();
  const std::string other = nat_config("other", (dir / "taker.sock").string(), "10.9.1.200");
  const std::string same = nat_config("same", (dir / "taker.sock").string(), "10.9.1.100");
  const std::string take = std::string(" --dpdk '") + kEal + " --vdev=net_null0 --vdev=net_null1' --take-over --state $state";
  const auto r = nat_run_beside(
      "taker", true,
      "$cli run --nf nat --config " + other + take + " > $dir/other.log 2>&1; echo \"other: status $? $(tail -1 $dir/other.log)\"; " +
          "echo \"after the refusal: $($cli ctl --socket $socket counters 2>&1 | head -c 10)\"; " +
          "$cli run --nf nat --json --config " + same + take + " > $dir/same.log 2>&1 & taker=$!; " +
          "wait $pid; echo \"handed over: status $?\"; for i in $(seq 100); do grep -q 'taken over' $dir/same.log && break; sleep 0.1; done; " +
          "echo \"taker: $($cli ctl --socket $socket counters 2>&1 | head -c 10)\"; kill -TERM $taker; wait $taker; " +
          "echo \"taker: status $?\"; cat $dir/same.log");
  // The running process has exited by the end (its status is printed): the harness's own wait says nothing.
  EXPECT_NE(r.output.find("other: status 2 flowtrack: error: run: --take-over: state file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("after the refusal: {\"nf\":\"nat"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hand-over: aborted by the new process: forwarding again"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("handed over: status 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("taker: {\"nf\":\"nat"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("taker: status 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 connections restored"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("taken over from the running process in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hand-over: committed: stopping"), std::string::npos) << r.output;
}

TEST(LiveCli, CtlWithoutADataPlaneIsOneError) {
  const auto r = run_cli("ctl --socket /nonexistent/flowtrack.sock counters");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot connect to the control socket"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace flowtrack
