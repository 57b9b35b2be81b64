#!/usr/bin/env bash
# Live throughput on a veth pair (docs/results/live.md): flowtrack's forwarder, stateless LB, stateful
# LB and NAT, and dpdk-testpmd in io forwarding mode, each in turn on the same two af_packet ports, fed
# by a dpdk-testpmd txonly generator (64-byte UDP frames, many flows) on its own core:
#
#   generator (txonly, core 0) g0 --- f0 [forwarder, core 1] f1 --- s0 sink (drops what it gets)
#
# Each forwarder runs SECONDS (default 6) per repetition, REPS (default 3) repetitions interleaved; the
# rate of a run is the median of its per-second output rates after the first two seconds; printed:
# the median over repetitions of each forwarder and each against testpmd. The generator's rate is the
# offered load: a forwarder at that rate is limited by the generator, not by itself. As root.
#
# Usage: scripts/live-throughput.sh [build/flowtrack]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/flowtrack}
seconds=${SECONDS_PER_RUN:-6}
reps=${REPS:-3}
source "$root/tests/live/live_lib.sh"
live_init dpdk-testpmd taskset
live_ns gen nf sink
live_veth gen g0 nf f0
live_veth nf f1 sink s0
f0_mac=$(ip netns exec "$tag-nf" cat /sys/class/net/f0/address)
s0_mac=$(ip netns exec "$tag-sink" cat /sys/class/net/s0/address)
eal="--no-huge --no-pci --no-shconf --no-telemetry -m 512 --log-level=error"

# The functions' configurations: traffic 10.40.x.y:9 -> 198.18.0.2:9 (UDP); port 1 holds 198.18.0.0/24,
# where the sink's MAC is configured for every address the functions send to (the sink answers no ARP:
# it has no address, so it drops everything without answering).
plane="[dataplane]
stats_interval = 1
[[dataplane.port]]
device = \"net_af_packet0\"
address = \"10.40.0.254/16\"
[[dataplane.port]]
device = \"net_af_packet1\"
address = \"198.18.0.254/24\"
[[dataplane.neighbor]]
address = \"198.18.0.2\"
mac = \"$s0_mac\"
[[dataplane.neighbor]]
address = \"198.18.0.3\"
mac = \"$s0_mac\""
service='[[service]]
name = "echo"
vip = "198.18.0.2"
port = 9
protocol = "udp"
  [[service.backend]]
  name = "sink"
  address = "198.18.0.3"'
printf '%s\n' "$plane" > "$work/fwd.toml"
printf '%s\n%s\n' "$service" "$plane" > "$work/slb.toml"
printf '[lb]\npolicy = "maglev"\n%s\n%s\n' "$service" "$plane" > "$work/lb.toml"
printf '[nat]\ninside = "10.40.0.0/16"\npool = ["198.18.0.100"]\n%s\n' "$plane" > "$work/nat.toml"

# The median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

start_generator() {
  live_spawn gen taskset -c 0 dpdk-testpmd $eal -l 0 --vdev=net_af_packet0,iface=g0 -- --forward-mode=txonly \
    --port-topology=loop --eth-peer=0,"$f0_mac" --tx-ip=10.40.0.1,198.18.0.2 --txonly-multi-flow --stats-period=1 \
    > "$work/generator.out" 2>&1
  generator_pid=${live_pids[-1]}
}
stop_generator() {
  kill -INT "$generator_pid"
  wait "$generator_pid" 2> /dev/null
}

# One run of flowtrack's function $1; sets $rate to its output Mpps (no subshell: the processes it
# starts stay known to the cleanup).
run_flowtrack() {
  live_flowtrack_prefix="taskset -c 1"
  live_start_flowtrack nf "$1" "$work/$1.toml" f0 f1
  start_generator
  sleep "$seconds"
  stop_generator
  live_stop_flowtrack > /dev/null
  rate=$(sed -n 's/^flowtrack live: \([0-9]*\) s, .* out \([0-9.]*\) Mpps.*/\1 \2/p' "$work/flowtrack.err" |
    awk '$1 > 2 { print $2 }' | median)
}

# One run of testpmd io forwarding on the same ports; sets $rate to its output Mpps (port 1's Tx-pps).
run_testpmd() {
  live_spawn nf taskset -c 1 dpdk-testpmd $eal -l 1 --vdev=net_af_packet0,iface=f0 --vdev=net_af_packet1,iface=f1 -- \
    --forward-mode=io --stats-period=1 > "$work/testpmd.out" 2>&1
  local pid=${live_pids[-1]}
  sleep 2
  start_generator
  sleep "$seconds"
  stop_generator
  kill -INT "$pid"
  wait "$pid" 2> /dev/null
  # Per second, port 0's block then port 1's: every second Tx-pps line is port 1's.
  rate=$(grep -o 'Tx-pps: *[0-9]*' "$work/testpmd.out" | awk '{ print $2 }' | awk 'NR % 2 == 0' | tail -n +3 | head -n -1 |
    awk '{ print $1 / 1e6 }' | median)
}

offered() {
  grep -o 'Tx-pps: *[0-9]*' "$work/generator.out" | awk '{ print $2 }' | tail -n +3 | head -n -1 | awk '{ print $1 / 1e6 }' | median
}

declare -A rates
forwarders=(testpmd fwd slb lb nat)
for rep in $(seq "$reps"); do
  for f in "${forwarders[@]}"; do
    if [[ $f == testpmd ]]; then run_testpmd; else run_flowtrack "$f"; fi
    load=$(offered)
    echo "rep $rep: $f $rate Mpps out (offered $load Mpps)"
    rates[$f]+="$rate "
  done
done
testpmd=$(echo ${rates[testpmd]} | tr ' ' '\n' | median)
echo "median of $reps: testpmd io $testpmd Mpps"
for f in fwd slb lb nat; do
  m=$(echo ${rates[$f]} | tr ' ' '\n' | median)
  echo "median of $reps: flowtrack $f $m Mpps, $(awk -v a="$m" -v b="$testpmd" 'BEGIN { printf "%.2f", b > 0 ? a / b : 0 }')x testpmd io"
done
