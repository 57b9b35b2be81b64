#!/usr/bin/env bash
# Runs the release tree's tests: the live scenarios (label "live") alongside all the others, these with
# `ctest -j JOBS`, the live set twice as wide. The live scenarios spend most of their time waiting
# (namespaces set up, curl and iperf3 round trips, idle timeouts: 11 s of CPU in 28 s of wall clock,
# 2026-11-27), so beside the others they take little from them, where in one ctest they held two of its
# slots. Each takes as many of its ctest's slots as it runs workers, and two two-worker scenarios never
# run at once (tests/CMakeLists.txt). At JOBS wide on two cores the live set was the phase's 176 s of
# wall clock, the others done long before. The live set's output is printed after the other's, not
# interleaved with it. Fails when either set fails.
#
# The tests are discovered when ctest loads them (gtest_discover_tests' PRE_TEST mode: a test binary
# newer than its list is listed anew, and the list file written), so the lists are brought up to date
# by one ctest first: two loading at once, one writing a list while the other read it, failed a clean
# clone's run with a parse error (2026-11-27).
set -uo pipefail
build_dir=$1
jobs=$2
live_log=$(mktemp)
trap 'rm -f "$live_log"' EXIT
ctest --test-dir "$build_dir" -N > /dev/null || exit 1
ctest --test-dir "$build_dir" -L live --output-on-failure -j $((2 * jobs)) > "$live_log" 2>&1 &
live=$!
ctest --test-dir "$build_dir" -LE live --output-on-failure -j "$jobs"
others_status=$?
wait "$live"
live_status=$?
cat "$live_log"
exit $((others_status != 0 || live_status != 0))
