#!/usr/bin/env bash
# release-tests.sh BUILD_DIR JOBS [COMMAND...]: runs the release tree's tests, the live scenarios (label
# "live") alongside all the others, these with `ctest -j JOBS`, the live set twice as wide; then COMMAND,
# if given, still beside the live set (`make test` runs the sanitizer trees' and the lab's tests there).
# Each set is a phase of its own in the phase log (scripts/phase.sh: live-tests, release-tests).
#
# The live scenarios spend most of their time waiting (namespaces set up, curl and iperf3 round trips,
# idle timeouts: 11 s of CPU in 28 s of wall clock, 2026-11-27), so beside the others they take little
# from them, where in one ctest they held two of its slots. Each takes as many of its ctest's slots as
# it runs workers, and two two-worker scenarios never run at once (tests/CMakeLists.txt): they are a
# chain (161 s alone on an idle machine at 249e8e4) that leaves most of a core free: the others ended
# long before it (118 s of a clean clone's 195), and COMMAND takes what is left. Builds
# beside the live set are another matter: at nice 19, and again as SCHED_IDLE, a sanitizer tree's
# build beside it failed three scenarios (docs/performance/build-ci.md). The live set's output is
# printed after the others', not interleaved with it. Fails when any part fails.
#
# The tests are discovered when ctest loads them (gtest_discover_tests' PRE_TEST mode: a test binary
# newer than its list is listed anew, and the list file written), so the lists are brought up to date
# by one ctest first: two loading at once, one writing a list while the other read it, failed a clean
# clone's run with a parse error (2026-11-27).
set -uo pipefail
build_dir=$1
jobs=$2
shift 2
phase="$(dirname "$0")/phase.sh"
live_log=$(mktemp)
trap 'rm -f "$live_log"' EXIT
ctest --test-dir "$build_dir" -N > /dev/null || exit 1
"$phase" live-tests ctest --test-dir "$build_dir" -L live --output-on-failure -j $((2 * jobs)) > "$live_log" 2>&1 &
live=$!
"$phase" release-tests ctest --test-dir "$build_dir" -LE live --output-on-failure -j "$jobs"
others_status=$?
then_status=0
if (($# > 0)); then
  "$@"
  then_status=$?
fi
wait "$live"
live_status=$?
cat "$live_log"
exit $((others_status != 0 || then_status != 0 || live_status != 0))
