#!/usr/bin/env bash
# Live throughput (docs/performance/live.md), in three parts, each forwarder alone on CPU 1:
#
# 1. The engine: flowtrack's forwarder and dpdk-testpmd in io and in mac forwarding mode between the
#    same two ports with no kernel in the way (net_pcap replaying a trace in a loop into net_null).
# 2. The functions: the stateful LB and the NAT live at 1M connections against their replay of the
#    same trace (`bench nf`), and the ports alone (testpmd io) in the same run: scripts/live-functions.sh,
#    whose settings (REPS, MODES, ...) it passes on. FUNCTIONS=0 skips it.
# 3. On a veth pair: flowtrack's forwarder, stateless LB, stateful LB and NAT, and testpmd io, each in
#    turn on the same two af_packet ports, fed by a dpdk-testpmd txonly generator (64-byte UDP frames,
#    many flows) on CPU 0:
#
#    generator (txonly, CPU 0) g0 --- f0 [forwarder, CPU 1] f1 --- s0 sink (drops what it gets)
#
#    The generator runs throughout; its median rate is the offered load: a forwarder at that rate is
#    limited by the generator, not by itself. VETH_RPS=1 puts f0's receive work on the forwarder's core
#    (RPS) so that the generator offers more than a forwarder carries; on this machine that drives the
#    forwarder's core into receive livelock (docs/performance/live.md), so it is off by default.
#
# Each forwarder runs SECONDS_PER_RUN (default 6) per repetition, REPS (default 3) repetitions
# interleaved; the rate of a run is the median of its per-second output rates after the first two
# seconds; printed: the median over repetitions, and flowtrack against testpmd. As root.
#
# ENGINE_ONLY=1 skips part 3.
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
# VETH_RPS=1: RPS on f0 (the forwarder's receiving end): the kernel's receive work for the frames the
# generator sends (veth, af_packet's copy into the forwarder's ring) runs on CPU 1, the forwarder's,
# instead of the generator's CPU 0, and the generator, left only its sends, offers more.
if [[ ${VETH_RPS:-0} == 1 ]]; then
  ip netns exec "$tag-nf" sh -c 'echo 2 > /sys/class/net/f0/queues/rx-0/rps_cpus' || live_fail "cannot set RPS on f0"
fi
f0_mac=$(ip netns exec "$tag-nf" cat /sys/class/net/f0/address)
s0_mac=$(ip netns exec "$tag-sink" cat /sys/class/net/s0/address)
eal="--no-huge --no-pci --no-shconf --no-telemetry -m 1024 --log-level=error"

# The functions' configurations: traffic 10.40.x.y:9 -> 198.18.0.2:9 (UDP); port 1 holds 198.18.0.0/24,
# where the sink's MAC is configured for every address the functions send to (the sink answers no ARP:
# it has no address, so it drops everything without answering).
# The [dataplane] table, its ports' roles given as "$1" and "$2" (the lb's and the nat's) or none.
plane() {
  local first= second=
  [[ $# -eq 2 ]] && first="role = \"$1\"" && second="role = \"$2\""
  printf '%s\n' "[dataplane]
stats_interval = 1
[[dataplane.port]]
device = \"net_af_packet0\"
address = \"10.40.0.254/16\"
$first
[[dataplane.port]]
device = \"net_af_packet1\"
address = \"198.18.0.254/24\"
$second
[[dataplane.neighbor]]
address = \"198.18.0.2\"
mac = \"$s0_mac\"
[[dataplane.neighbor]]
address = \"198.18.0.3\"
mac = \"$s0_mac\""
}
service='[[service]]
name = "echo"
vip = "198.18.0.2"
port = 9
protocol = "udp"
  [[service.backend]]
  name = "sink"
  address = "198.18.0.3"'
plane > "$work/fwd.toml"
printf '%s\n%s\n' "$service" "$(plane)" > "$work/slb.toml"
printf '[lb]\npolicy = "maglev"\n%s\n%s\n' "$service" "$(plane clients backends)" > "$work/lb.toml"
printf '[nat]\ninside = "10.40.0.0/16"\npool = ["198.18.0.100"]\n%s\n' "$(plane inside outside)" > "$work/nat.toml"

# The median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# One run of flowtrack's function $1; sets $rate to its output Mpps (no subshell: the processes it
# starts stay known to the cleanup).
run_flowtrack() {
  live_flowtrack_prefix="taskset -c 1"
  live_start_flowtrack nf "$1" "$work/$1.toml" f0 f1
  sleep "$seconds"
  live_stop_flowtrack > /dev/null
  rate=$(sed -n 's/^flowtrack live: \([0-9]*\) s, .* out \([0-9.]*\) Mpps.*/\1 \2/p' "$work/flowtrack.err" |
    awk '$1 > 2 { print $2 }' | median)
}

# The per-second Tx-pps lines of testpmd's output $1 for port $2 of $3 ports, in Mpps, without the
# first two seconds and the last (partial) one.
tx_rates() {
  grep -a -o 'Tx-pps: *[0-9]*' "$1" | awk -v port="$2" -v ports="$3" '(NR - 1) % ports == port { print $2 / 1e6 }' |
    tail -n +3 | head -n -1
}

# One run of testpmd io forwarding on the same ports; sets $rate to its output Mpps (port 1's).
run_testpmd() {
  live_spawn nf dpdk-testpmd $eal --lcores=0@1,1@1 --vdev=net_af_packet0,iface=f0 --vdev=net_af_packet1,iface=f1 -- \
    --forward-mode=io --total-num-mbufs=16384 --stats-period=1 > "$work/testpmd.out" 2>&1
  local pid=${live_pids[-1]} _
  # It takes seconds to start (EAL's memory, without hugepages): measured from its first stats.
  for _ in $(seq 300); do grep -a -q 'Tx-pps' "$work/testpmd.out" && break; sleep 0.1; done
  sleep $((seconds + 1))
  kill -INT "$pid"
  wait "$pid" 2> /dev/null
  rate=$(tx_rates "$work/testpmd.out" 1 2 | median)
}

# The engine alone: the same forwarders between two ports with no kernel in the way, net_pcap
# replaying a trace of 4000 64-byte UDP frames over 1000 flows (infinite_rx) into net_null, which drops
# what it is sent. The trace's destination MAC is net_pcap's first port's (02:70:63:61:70:00, 'pcap'),
# as a router is sent frames to its own MAC.
"$bin" trace gen --profile uniform --flows 1000 --packets 4000 -o "$work/uniform.pcap" > /dev/null
python3 - "$work/uniform.pcap" << 'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
offset = 24
while offset < len(data):
    data[offset + 16:offset + 22] = bytes([0x02, 0x70, 0x63, 0x61, 0x70, 0x00])
    offset += 16 + struct.unpack_from("<I", data, offset + 8)[0]
open(sys.argv[1], "wb").write(data)
PY
engine_ports="--vdev=net_pcap0,rx_pcap=$work/uniform.pcap,infinite_rx=1 --vdev=net_null0,no-rx=1"
cat > "$work/engine.toml" << CONF
[dataplane]
stats_interval = 1
[[dataplane.port]]
device = "net_pcap0"
address = "10.8.0.1/24"
[[dataplane.port]]
device = "net_null0"
address = "10.9.0.1/24"
gateway = "10.9.0.2"
[[dataplane.neighbor]]
address = "10.9.0.2"
mac = "02:00:00:00:00:09"
CONF
engine_run() {
  if [[ $1 == testpmd* ]]; then  # testpmd: io mode (moves mbufs, touches no packet); testpmd-mac: mac mode
    local mode=io            # (writes both Ethernet addresses of every packet, as a router's layer 2 does)
    [[ $1 == testpmd-mac ]] && mode=mac
    taskset -c 1 dpdk-testpmd $eal --lcores=0@1,1@1 $engine_ports -- --forward-mode=$mode --total-num-mbufs=16384 \
      --stats-period=1 > "$work/engine.out" 2>&1 &
  else
    taskset -c 1 "$bin" run --nf fwd --config "$work/engine.toml" --dpdk "$eal $engine_ports" > "$work/engine.out" 2>&1 &
  fi
  local pid=$! _
  live_pids+=("$pid")
  for _ in $(seq 300); do grep -a -q -e 'Tx-pps' -e ' 1 s, in' "$work/engine.out" && break; sleep 0.1; done
  sleep $((seconds + 1))
  kill -INT "$pid"
  # testpmd sometimes hangs closing net_pcap after SIGINT: what it printed is all that is needed.
  for _ in $(seq 20); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  if [[ $1 == testpmd* ]]; then
    rate=$(tx_rates "$work/engine.out" 1 2 | median)
  else
    rate=$(sed -n 's/^flowtrack live: \([0-9]*\) s, .* out \([0-9.]*\) Mpps.*/\1 \2/p' "$work/engine.out" | awk '$1 > 2 { print $2 }' | median)
  fi
}
# The forwarder's own work (the parse to the transport header, the flow hash, the function, the
# verdict), replayed from memory on the same CPU: the same 1000 flows of 64-byte UDP frames, 4 M of them.
# testpmd mac does none of it, so flowtrack's forwarder live does at most 1 / (1 / mac + 1 / replay).
"$bin" trace gen --profile uniform --flows 1000 --packets 4000000 -o "$work/uniform-replay.pcap" > /dev/null
replay_fwd() {
  taskset -c 1 "$bin" run --nf fwd --in "$work/uniform-replay.pcap" --json 2> /dev/null |
    python3 -c 'import json, sys; print(json.loads(sys.stdin.readlines()[-1])["mpps"])' 2> /dev/null || echo 0
}
declare -A engine
for rep in $(seq "$reps"); do
  for f in testpmd testpmd-mac fwd replay; do
    if [[ $f == replay ]]; then rate=$(replay_fwd); else engine_run "$f"; fi
    echo "engine rep $rep: $f $rate Mpps out (load $(cut -d' ' -f1-3 /proc/loadavg))"
    engine[$f]+="$rate "
  done
done
engine_testpmd=$(echo ${engine[testpmd]} | tr ' ' '\n' | median)
engine_mac=$(echo ${engine[testpmd-mac]} | tr ' ' '\n' | median)
engine_fwd=$(echo ${engine[fwd]} | tr ' ' '\n' | median)
engine_replay=$(echo ${engine[replay]} | tr ' ' '\n' | median)
engine_bound=$(awk -v m="$engine_mac" -v r="$engine_replay" 'BEGIN { if (m > 0 && r > 0) printf "%.2f", 1 / (1 / m + 1 / r); else print 0 }')
echo "engine, median of $reps: testpmd io $engine_testpmd Mpps, testpmd mac $engine_mac Mpps, flowtrack fwd $engine_fwd Mpps:" \
  "$(awk -v a="$engine_fwd" -v b="$engine_testpmd" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')x io," \
  "$(awk -v a="$engine_fwd" -v b="$engine_mac" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')x mac;" \
  "the forwarder replayed $engine_replay Mpps, so live at most $engine_bound Mpps =" \
  "$(awk -v a="$engine_bound" -v b="$engine_mac" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')x mac"

if [[ ${FUNCTIONS:-1} == 1 ]]; then
  "$root/scripts/live-functions.sh" "$bin"
fi

[[ -n ${ENGINE_ONLY:-} ]] && exit 0

# The generator runs throughout; each forwarder takes its turn on f0 and f1.
live_spawn gen dpdk-testpmd $eal --lcores=0@0,1@0 --vdev=net_af_packet0,iface=g0 -- --forward-mode=txonly \
  --total-num-mbufs=16384 --port-topology=loop --eth-peer=0,"$f0_mac" --tx-ip=10.40.0.1,198.18.0.2 --txonly-multi-flow \
  --stats-period=1 > "$work/generator.out" 2>&1
generator=${live_pids[-1]}
sleep 3
declare -A rates
forwarders=(testpmd fwd slb lb nat)
for rep in $(seq "$reps"); do
  for f in "${forwarders[@]}"; do
    if [[ $f == testpmd ]]; then run_testpmd; else run_flowtrack "$f"; fi
    echo "rep $rep: $f $rate Mpps out"
    rates[$f]+="$rate "
  done
done
kill -INT "$generator"
wait "$generator" 2> /dev/null
echo "offered (the generator's median): $(tx_rates "$work/generator.out" 0 1 | median) Mpps"
testpmd=$(echo ${rates[testpmd]} | tr ' ' '\n' | median)
echo "median of $reps: testpmd io $testpmd Mpps"
for f in fwd slb lb nat; do
  m=$(echo ${rates[$f]} | tr ' ' '\n' | median)
  echo "median of $reps: flowtrack $f $m Mpps, $(awk -v a="$m" -v b="$testpmd" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')x testpmd io"
done
