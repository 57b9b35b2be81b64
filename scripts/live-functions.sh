#!/usr/bin/env bash
# The stateful LB and the NAT live on DPDK ports at 1M connections, against their replay of the same
# trace, in one run (docs/performance/live.md; scripts/live-throughput.sh calls it):
#
#  - the trace is `bench nf`'s at 1M connections (the campus profile, 20 000 connections x 55 shifted
#    windows: 12.1 M packets, `trace gen`), as each function's two ports receive it (`trace ports`: the
#    answers as they reach the function, the clients' or the inside's packets on port 0, the other
#    side's on port 1, one file a port and RX queue), written once into TRACE_DIR and kept there;
#  - live: `flowtrack run --dpdk` on two net_pcap ports that replay their files from memory in a loop
#    (infinite_rx=1: at each receive the PMD copies a frame into a fresh mbuf, as a NIC writes one; what
#    the function sends, the port frees). The loop repeats the trace: after the first pass every
#    connection is met again with its state kept, except those the function ended meanwhile (closed TCP
#    connections open again). A run's rate: the median of its per-second input rates after the first
#    SKIP seconds; its connections created a packet say how much of the work is opening connections;
#  - the replay: `bench nf` on the same trace, function, table (cuckoo), aging (wheel), bursts of 32;
#  - what the ports cost: perf samples each live run (PERF=1, the default, where perf is installed) and
#    the share of its CPU time in DPDK's libraries (net_pcap's copy of each frame into a fresh mbuf, its
#    freeing of what is sent: a NIC's work) says what flowtrack's own part alone would run at; and
#    dpdk-testpmd io between the same two ports (the LB's), the ports with no function at all.
#
# Modes (MODES, default "1"): 1, one worker; 2rss, two workers on two RX queues a port, each frame on
# the queue the port's RSS gives it (the symmetric Toeplitz hash); 2owner, the same with each connection
# on its owner's queue (as flow rules would put it: no hand-offs); 2sw, two workers on one RX queue a
# port ([dataplane] rx_queues = 1: worker 0 receives everything and hands worker 1 its share, the
# software dispatcher). One worker runs on CPU $CPU (default 1); two on CPUs 0 and 1. The replay runs on
# as many workers, `bench nf` pinned the same way.
#
# Several binaries (NAME=PATH ...) run live in turn in every repetition (their A/B), the first one the
# replay and testpmd too. REPS (default 3) repetitions, interleaved; printed: every run, then per binary,
# function and mode the median and range over the repetitions, the live rate against the replay's of
# the same repetition (median of those ratios) and what flowtrack alone would do without the PMDs; for
# one worker the bound the ports leave, 1 / (1 / replay + 1 / ports), and the fraction of it reached;
# for two workers their ratio to one, live and replayed (the replay's scaling on the same two cores is
# the ceiling), and the fraction of that ceiling reached. A two-worker run whose function dropped more
# than the one-worker run of its repetition (more than half again, in all and a packet: its answers
# missed their connections) is flagged INVALID, and the script then exits 1. As root (DPDK on net_pcap,
# no hugepages).
#
# DISPATCH_BOUND=X (the "two workers / one at most" of a CALLGRIND=1 run's 2sw) is printed beside the 2sw
# figures, with the fraction of it reached.
#
# WINDOWS=N takes N shifted windows instead of 55 (1: about 20 000 connections). CALLGRIND=1 counts
# instead (no replay, no testpmd): each live run under callgrind, twice (run_counted), for the
# instructions a packet received of the busiest worker, everything it does (receive, sort, the
# function, the sends; the PMDs' part included): load-free, for binary against binary, on a small trace
# (WINDOWS=1 SECONDS_PER_RUN=20: valgrind runs some 50 times slower). With mode 1 among the modes, each
# two-worker mode's bound against one worker is printed: one worker's instructions a packet over the
# busier worker's.
#
# Usage: scripts/live-functions.sh [NAME=]build/flowtrack [NAME=PATH ...]
#        MODES="1 2rss 2sw" NFS="lb nat" REPS=3 SECONDS_PER_RUN=8 SKIP=3 TRACE_DIR=/var/tmp/flowtrack-live-w55
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 ]] || set -- "$root/build/flowtrack"
reps=${REPS:-3}
seconds=${SECONDS_PER_RUN:-8}
skip=${SKIP:-3}
cpu=${CPU:-1}
modes=${MODES:-1}
nfs=${NFS:-lb nat}
windows=${WINDOWS:-55}
callgrind=${CALLGRIND:-0}
dir=${TRACE_DIR:-/var/tmp/flowtrack-live-w$windows}
names=() bins=()
for spec in "$@"; do
  if [[ $spec == *=* ]]; then names+=("${spec%%=*}") bins+=("${spec#*=}"); else names+=("$(basename "$spec")") bins+=("$spec"); fi
done
bin=${bins[0]}
command -v dpdk-testpmd > /dev/null || { echo "dpdk-testpmd is not installed" >&2; exit 77; }
mkdir -p "$dir"
work=$(mktemp -d)
prefix=lf$$
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
  rm -rf "$work" "/var/run/dpdk/$prefix"
}
trap cleanup EXIT

# net_pcap's ports' MACs, in the order of their --vdev: the frames are addressed to them.
macs=02:70:63:61:70:00,02:70:63:61:70:01
# The trace holds about 220 000 frames a window (12.1 M for 55), each of at most 128 bytes (the campus
# profile's snaplen): every one waits in an mbuf of net_pcap's, so the pool holds them all, each with
# room for 128 bytes (and its headroom, 576 bytes in all with its header).
mbufs=$((windows * 230000 + 100000))
eal="--no-huge --no-pci --no-shconf --no-telemetry --file-prefix=$prefix -m $((mbufs * 576 / 1048576 + 256)) --log-level=error"

# The functions' configurations: bench nf's (apps/flowtrack/bench_nf.cpp: the campus servers' four
# VIPs, TCP 443 and 80 and UDP 53 and 443, three backends for all, Maglev, room for twice the trace's
# 1.1 M connections; the NAT's inside network 10.0.0.0/8 and a pool address per 16 K connections).
# The ports: the clients' or inside side on port 0 behind a gateway, the backends' or outside network on
# port 1; every next hop configured (net_pcap answers no ARP).
plane() {  # $1 $2: the roles; $3: port 1's network; $4...: port 1's neighbours
  local first=$1 second=$2 network=$3 n
  shift 3
  printf '[dataplane]\nstats_interval = 1\nmbufs = %s\nmbuf_size = 128\n%s\n' "$mbufs" "${RX_QUEUES_LINE:-}"
  printf '[[dataplane.port]]\ndevice = "net_pcap0"\naddress = "192.0.2.1/30"\ngateway = "192.0.2.2"\nrole = "%s"\n' "$first"
  printf '[[dataplane.port]]\ndevice = "net_pcap1"\naddress = "%s"\nrole = "%s"\n' "$network" "$second"
  for n in 192.0.2.2 "$@"; do printf '[[dataplane.neighbor]]\naddress = "%s"\nmac = "02:00:00:00:00:01"\n' "$n"; done
}
lb_config() {
  local protocol b
  printf '[lb]\npolicy = "maglev"\nmax_connections = 2200000\n'
  for protocol in tcp udp; do
    printf '[[service]]\nname = "%s"\nvip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]\n' "$protocol"
    printf 'port = %s\nprotocol = "%s"\n' "$([[ $protocol == tcp ]] && echo '[443, 80]' || echo '[53, 443]')" "$protocol"
    for b in 1 2 3; do printf '  [[service.backend]]\n  name = "backend-%s"\n  address = "10.200.0.%s"\n' "$b" "$b"; done
  done
  plane clients backends 10.200.0.254/24 10.200.0.1 10.200.0.2 10.200.0.3
}
nat_config() {
  local i
  printf '[nat]\ninside = "10.0.0.0/8"\npool = [\n'
  for i in $(seq 134); do printf '  "203.0.113.%s",\n' "$i"; done
  printf ']\nmax_sessions = 2200000\nmax_mappings = 2200000\n' 
  plane inside outside 198.18.0.254/24 198.18.0.1 198.18.0.2 198.18.0.3 198.18.0.4
}

workers_of() { [[ $1 == 1 ]] && echo 1 || echo 2; }
queues_of() { [[ $1 == 2rss || $1 == 2owner ]] && echo 2 || echo 1; }
split_of() { [[ $1 == 2owner ]] && echo owner || echo rss; }
first_role() { [[ $1 == lb ]] && echo clients || echo inside; }
second_role() { [[ $1 == lb ]] && echo backends || echo outside; }

# The trace once, then each function's files for each mode, kept while the configuration and the
# binary that wrote them are the same (the answers carry the ports the binary's NAT allocates).
writer="# trace ports by $(sha256sum "$bin" | cut -d' ' -f1)"
if [[ ! -s $dir/campus.pcap ]]; then
  "$bin" trace gen --profile campus --flows 20000 --windows "$windows" -o "$dir/campus.pcap" || exit 1
fi
for nf in $nfs; do
  for mode in $modes; do
    "${nf}_config" > "$work/$nf-$mode.toml"
    [[ $mode == 2sw ]] && RX_QUEUES_LINE="rx_queues = 1" "${nf}_config" > "$work/$nf-$mode.toml"
    echo "$writer" >> "$work/$nf-$mode.toml"
    files=$dir/$nf-$mode
    if ! cmp -s "$work/$nf-$mode.toml" "$files.toml" || [[ ! -s $files-$(first_role "$nf")-0.pcap ]]; then
      "$bin" trace ports --nf "$nf" --config "$work/$nf-$mode.toml" --workers "$(workers_of "$mode")" --queues "$(queues_of "$mode")" \
        --split "$(split_of "$mode")" --macs "$macs" -o "$files" "$dir/campus.pcap" || exit 1
      cp "$work/$nf-$mode.toml" "$files.toml"
    fi
  done
done

# The --vdev arguments of function $1's ports in mode $2: a net_pcap port per side, an rx_pcap a queue.
# On one queue with two workers, the second rx_pcap only gives the port its second TX queue (net_pcap
# has one a receive file): the workers poll one RX queue ([dataplane] rx_queues = 1), so it is never
# read.
vdevs() {
  local nf=$1 mode=$2 p=0 role q args=
  for role in "$(first_role "$nf")" "$(second_role "$nf")"; do
    args+=" --vdev=net_pcap$p"
    for q in $(seq 0 $(($(queues_of "$mode") - 1))); do args+=",rx_pcap=$dir/$nf-$mode-$role-$q.pcap"; done
    [[ $mode == 2sw ]] && args+=",rx_pcap=$dir/$nf-$mode-$role-0.pcap"
    args+=",infinite_rx=1"
    p=$((p + 1))
  done
  echo "$args"
}
lcores_of() { [[ $(workers_of "$1") == 1 ]] && echo "$cpu" || echo "0,1"; }
cpus_of() { [[ $(workers_of "$1") == 1 ]] && echo "$cpu" || echo "0,1"; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

# Waits for $1 (a PID) to print a line matching $3 into $2 (up to 5 minutes: the start loads 12 M frames
# into mbufs, minutes on a loaded machine), then $4 seconds more (SECONDS_PER_RUN + SKIP if not given),
# then stops it (SIGINT; SIGKILL if it hangs 30 s, as testpmd sometimes does closing net_pcap).
measure() {
  local pid=$1 out=$2 ready=$3 _
  for _ in $(seq 3000); do grep -a -q -e "$ready" "$out" 2> /dev/null && break; kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  sleep "${4:-$((seconds + skip))}"
  kill -INT "$pid" 2> /dev/null
  for _ in $(seq 300); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
}

# One live run of binary $1, function $2, mode $3: sets $rate (input Mpps), $created (connections
# created a packet received, drops, hand-offs), $function_drops (the function's drops and the packets
# received: "DROPS PACKETS") and $pmd (the share of the run's CPU time spent in DPDK's
# libraries, net_pcap's receive and transmit nearly all of it: what a NIC's DMA would do, sampled by
# perf during the measured seconds; empty without perf or with PERF=0).
run_live() {
  local exe=$1 nf=$2 mode=$3 recorder=
  start_live "$@"
  local pid=$!
  if [[ ${PERF:-1} == 1 ]] && command -v perf > /dev/null; then
    (
      for _ in $(seq 3000); do grep -a -q ' 1 s, in' "$work/live.err" 2> /dev/null && break; sleep 0.1; done
      sleep "$skip"
      perf record -q -e cpu-clock -F 999 -p "$pid" -o "$work/perf.data" -- sleep $((seconds - 2)) > /dev/null 2>&1
    ) &
    recorder=$!
  fi
  measure "$pid" "$work/live.err" ' 1 s, in'
  pmd=
  if [[ -n $recorder ]]; then
    wait "$recorder"
    pmd=$(perf report -i "$work/perf.data" --sort dso --stdio 2> /dev/null | awk '$2 ~ /^librte_/ { s += $1 } END { printf "%.3f", s / 100 }')
  fi
  rate=$(sed -n 's/^flowtrack live: \([0-9]*\) s, in \([0-9.]*\) Mpps.*/\1 \2/p' "$work/live.err" | awk -v skip="$skip" '$1 > skip { print $2 }' | median)
  created=$(python3 - "$work/live.json" 2> /dev/null << 'PY' || echo "no report: $(tail -n 3 "$work/live.err" | tr '\n' ' ')"
import json, sys
r = json.load(open(sys.argv[1]))
print("%.4f created/packet, drops %s, handed %s" % (r["connections"] / max(r["packets_in"], 1), r["drops"], r["handed_off"]))
PY
  )
  function_drops=$(python3 - "$work/live.json" "$work/live.err" "$skip" 2> /dev/null << 'PY' || echo "0 0"
import json, re, sys
# The ports' own drops (PortDrop, dpdk_ports.hpp) are not the function's: what is left is what the
# function refused (the LB's not_to_service, the NAT's no_mapping: answers it could not place).
# Counted after the first SKIP seconds only (from the per-second lines' "drops so far"): in the first
# pass of the looped trace an answer may be played before its request (the ports' files are read at
# the same rate in packets, not in the trace's time; with two workers, at each worker's pace), which
# drops it without a mapping; from the second pass on every mapping exists, and a drop is a real loss.
ports = {"not_ipv4", "not_our_mac", "segmented", "bad_arp", "no_route", "arp_unresolved", "no_mbuf", "tx_full", "handoff_full"}
def function_drops(text):
    return sum(int(n) for kind, n in re.findall(r"([a-z_]+) (\d+)", text) if kind not in ports)
r = json.load(open(sys.argv[1]))
at_skip = 0
for line in open(sys.argv[2], errors="replace"):
    m = re.match(r"flowtrack live: (\d+) s, .*drops so far \d+(?: \((.*)\))?", line)
    if m and int(m.group(1)) <= int(sys.argv[3]):
        at_skip = function_drops(m.group(2) or "")
print(sum(v for k, v in r["drops"].items() if k not in ports) - at_skip, r["packets_in"])
PY
  )
}

# Starts binary $1 live on function $2 in mode $3 in the background ($! its PID), under the command
# words that follow if any, its output files removed first (measure() must not find the run before's).
start_live() {
  local exe=$1 nf=$2 mode=$3
  shift 3
  rm -f "$work/live.json" "$work/live.err" "$work/perf.data" "$work"/callgrind.out*
  taskset -c "$(cpus_of "$mode")" "$@" "$exe" run --nf "$nf" --workers "$(workers_of "$mode")" --json \
    --config "$dir/$nf-$mode.toml" --dpdk "$eal -l $(lcores_of "$mode") $(vdevs "$nf" "$mode")" > "$work/live.json" 2> "$work/live.err" &
  pids+=("$!")
}

# Under callgrind (CALLGRIND=1): the worker threads' whole bodies, thread by thread, in a run of
# SECONDS_PER_RUN and in one twice as long: the difference of their instructions over the difference of
# their packets received is what a packet costs, the start and the stop (the function's tables built,
# the ports closed) taken out. Sets $rate (the busiest thread's instructions a packet: the one worker;
# of two on one RX queue, worker 0, which receives everything) and $created (every thread's).
run_counted() {
  local exe=$1 nf=$2 mode=$3 length
  for length in 1 2; do
    start_live "$exe" "$nf" "$mode" valgrind --tool=callgrind --collect-atstart=no \
      --toggle-collect='*{lambda(unsigned int, flowtrack::StartGate&)#*}::operator()*' --separate-threads=yes --callgrind-out-file="$work/callgrind.out"
    measure "$!" "$work/live.err" ' 1 s, in' $((seconds * length))
    rm -rf "$work/counted$length"
    mkdir "$work/counted$length"
    mv "$work"/callgrind.out* "$work/live.json" "$work/counted$length/"
  done
  local counted
  counted=$(python3 - "$work/counted1" "$work/counted2" 2> /dev/null << 'PY' || echo "0|none"
import json, os, sys
def run(directory):
    packets = json.load(open(os.path.join(directory, "live.json")))["packets_in"]
    threads = {}
    for name in os.listdir(directory):
        if name.startswith("callgrind.out-"):
            lines = open(os.path.join(directory, name))
            threads[name] = next((int(l.split()[1]) for l in lines if l.startswith(("totals:", "summary:"))), 0)
    return packets, threads
short, long = run(sys.argv[1]), run(sys.argv[2])
per_packet = sorted(((long[1][t] - short[1].get(t, 0)) / (long[0] - short[0]) for t in long[1]), reverse=True)
print("%.1f|%s" % (per_packet[0], " + ".join("%.1f" % p for p in per_packet if p > 0.5)))
PY
  )
  rate=${counted%%|*}
  created="instructions a packet by thread: ${counted#*|}"
}

# dpdk-testpmd io between the LB's two ports: sets $rate (Mpps received, both ports).
run_ports() {
  local mode=$1
  rm -f "$work/testpmd.out"
  taskset -c "$cpu" dpdk-testpmd $eal --lcores=0@$cpu,1@$cpu $(vdevs lb "$mode") -- --forward-mode=io \
    --total-num-mbufs=$mbufs --mbuf-size=$((128 + 128)) --stats-period=1 > "$work/testpmd.out" 2>&1 &
  local pid=$!
  pids+=("$pid")
  measure "$pid" "$work/testpmd.out" 'Rx-pps'
  rate=$(grep -a -o 'Rx-pps: *[0-9]*' "$work/testpmd.out" | awk '{ s += $2 } NR % 2 == 0 { print s / 1e6; s = 0 }' |
    tail -n +$((skip + 1)) | head -n -1 | median)
}

# bench nf's replay of function $1 on $2 workers: sets $rate (Mpps).
run_replay() {
  local nf=$1 workers=$2
  taskset -c "$([[ $workers == 1 ]] && echo "$cpu" || echo 0,1)" "$bin" bench nf --nfs "$nf" --tables cuckoo --agings wheel \
    --scalings sharded --workers "$workers" --burst 32 --connections 1000000 --reps 1 --no-stages --json > "$work/bench.json" 2>&1
  rate=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("nf") == sys.argv[2]: print("%.3f" % r["mpps"])' "$work/bench.json" "$nf" 2> /dev/null | head -n 1)
  [[ -n $rate ]] || rate=0
}

# A run of two workers whose function drops more after the first SKIP seconds, in all and a packet, than
# half again what the one-worker run of the same repetition dropped does not do the same work: its
# answers miss their connections (a trace whose answers were written for other external ports than the
# workers give, say). SKIP must outlast the trace's first pass (at 1M connections some 5 s at 2.5 Mpps).
# Sets $invalid to why, or empty; the run is flagged, and so is its summary line and the exit status.
check_drops() {  # $1: the run's key, $2: the one-worker run's key
  local drops packets base base_packets
  read -r drops packets <<< "${fdrops["$1 $rep"]:-0 0}"
  read -r base base_packets <<< "${fdrops["$2 $rep"]:-}"
  invalid=
  [[ -n $base ]] || return 0
  if awk -v d="$drops" -v n="$packets" -v b="$base" -v bn="$base_packets" \
    'BEGIN { exit !(d > 1.5 * b && bn > 0 && n > 0 && d / n > 1.5 * b / bn) }'; then
    invalid="INVALID: the function dropped $drops of $packets packets, one worker $base of $base_packets"
  fi
}

declare -A results pmds fdrops invalids
pmd=
invalid=
failed=0
unit=Mpps
[[ $callgrind == 1 ]] && unit="instructions a packet"
record() { results[$1]+="$2 "; echo "rep $rep: $1 $2 $unit $3 (load $(cut -d' ' -f1-3 /proc/loadavg))"; }
for rep in $(seq "$reps"); do
  for nf in $nfs; do
    for workers in $(for m in $modes; do workers_of "$m"; done | sort -u); do
      [[ $callgrind == 1 ]] && break
      run_replay "$nf" "$workers"
      record "replay $nf ${workers}w" "$rate" ""
    done
    for mode in $modes; do
      for i in "${!bins[@]}"; do
        invalid=
        if [[ $callgrind == 1 ]]; then
          run_counted "${bins[$i]}" "$nf" "$mode"
        else
          run_live "${bins[$i]}" "$nf" "$mode"
          fdrops["${names[$i]} $nf $mode $rep"]=$function_drops
          [[ $(workers_of "$mode") == 2 ]] && check_drops "${names[$i]} $nf $mode" "${names[$i]} $nf 1"
        fi
        record "${names[$i]} $nf $mode" "$rate" "($created${pmd:+; DPDK libraries $pmd of the CPU time})${invalid:+ $invalid}"
        [[ -n $invalid ]] && invalids["${names[$i]} $nf $mode"]+=x && failed=1
        [[ -n $pmd ]] && pmds["${names[$i]} $nf $mode"]+="$pmd "
      done
    done
  done
  [[ $callgrind == 1 ]] && continue
  run_ports 1
  record "testpmd-io ports" "$rate" ""
done

echo
echo "median over $reps repetitions (range), $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p')"
if [[ $callgrind == 1 ]]; then
  for nf in $nfs; do
    for mode in $modes; do
      first=$(echo ${results["${names[0]} $nf $mode"]:-} | tr ' ' '\n' | median)
      for i in "${!bins[@]}"; do
        key="${names[$i]} $nf $mode"
        n=$(echo ${results[$key]:-} | tr ' ' '\n' | median)
        printf '%s %s %s: %s instructions a packet (%s), %.3fx %s' "${names[$i]}" "$nf" "$mode" "$n" \
          "$(echo ${results[$key]:-} | tr ' ' '\n' | range)" "$(awk -v a="$n" -v b="$first" 'BEGIN { print (b > 0 ? a / b : 0) }')" "${names[0]}"
        one=$(echo ${results["${names[$i]} $nf 1"]:-} | tr ' ' '\n' | median)
        if [[ $(workers_of "$mode") == 2 && -n ${results["${names[$i]} $nf 1"]:-} ]]; then
          # Two workers go at most as fast as the busier one lets them: one worker's instructions a
          # packet over the busier worker's (each of every packet received) is their bound against one.
          printf '; two workers / one at most %.2fx (one worker %s over the busier one %s)' \
            "$(awk -v a="$one" -v b="$n" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$one" "$n"
        fi
        echo
      done
    done
  done
  exit 0
fi
ports=$(echo ${results[testpmd-io ports]:-} | tr ' ' '\n' | median)
echo "ports alone (testpmd io, the LB's ports): $ports Mpps ($(echo ${results[testpmd-io ports]:-} | tr ' ' '\n' | range))"
for nf in $nfs; do
  for mode in $modes; do
    workers=$(workers_of "$mode")
    replay_key="replay $nf ${workers}w"
    replay=$(echo ${results[$replay_key]:-} | tr ' ' '\n' | median)
    for i in "${!bins[@]}"; do
      key="${names[$i]} $nf $mode"
      live=$(echo ${results[$key]:-} | tr ' ' '\n' | median)
      # The ratio of each repetition's live and replay runs, then their median.
      ratio=$(paste <(echo ${results[$key]:-} | tr ' ' '\n') <(echo ${results[$replay_key]:-} | tr ' ' '\n') |
        awk '$2 > 0 { print $1 / $2 }' | median)
      printf '%s %s %s: live %s Mpps (%s), replay %s Mpps (%s): %.2fx' "${names[$i]}" "$nf" "$mode" \
        "$live" "$(echo ${results[$key]:-} | tr ' ' '\n' | range)" "$replay" "$(echo ${results[$replay_key]:-} | tr ' ' '\n' | range)" "$ratio"
      if [[ $workers == 1 ]]; then
        # The bound of a live run on these ports: the replay's time a packet plus the ports' (testpmd io
        # between them, no function): 1 / (1 / replay + 1 / ports), each repetition's, then the median of
        # live / bound.
        reached=$(paste <(echo ${results[$key]:-} | tr ' ' '\n') <(echo ${results[$replay_key]:-} | tr ' ' '\n') \
          <(echo ${results[testpmd-io ports]:-} | tr ' ' '\n') | awk '$2 > 0 && $3 > 0 { print $1 * (1 / $2 + 1 / $3) }' | median)
        bound=$(awk -v r="$replay" -v p="$ports" 'BEGIN { if (r > 0 && p > 0) printf "%.2f", 1 / (1 / r + 1 / p); else print 0 }')
        printf '; bound 1/(1/replay + 1/ports) %s Mpps, %.2f of it reached' "$bound" "$reached"
        if [[ -n ${pmds[$key]:-} ]]; then
          # What the PMDs take of the live run is what a NIC would do instead: flowtrack's own part alone
          # would run at live / (1 - share), each repetition's, then their median.
          share=$(echo ${pmds[$key]} | tr ' ' '\n' | median)
          own=$(paste <(echo ${results[$key]:-} | tr ' ' '\n') <(echo ${pmds[$key]} | tr ' ' '\n') |
            awk '$2 < 1 { print $1 / (1 - $2) }' | median)
          printf '; DPDK libraries %s of the CPU time: flowtrack alone %.2f Mpps = %.2fx replay' "$share" "$own" \
            "$(awk -v a="$own" -v r="$replay" 'BEGIN { print (r > 0 ? a / r : 0) }')"
        fi
      elif [[ -n ${results["${names[$i]} $nf 1"]:-} ]]; then
        # Two workers against one, live and replayed, each the median of the repetitions' paired ratios;
        # the replay's scaling on the same cores is the ceiling (the live path adds the ports' work to
        # both workers alike at best), and the fraction of it reached the median of the repetitions'
        # live scaling over their replay scaling.
        one_live=$(echo ${results["${names[$i]} $nf 1"]:-} | tr ' ' '\n')
        one_replay=$(echo ${results["replay $nf 1w"]:-} | tr ' ' '\n')
        two_live=$(paste <(echo ${results[$key]:-} | tr ' ' '\n') <(echo "$one_live") | awk '$2 > 0 { print $1 / $2 }' | median)
        two_replay=$(paste <(echo ${results[$replay_key]:-} | tr ' ' '\n') <(echo "$one_replay") | awk '$2 > 0 { print $1 / $2 }' | median)
        of_ceiling=$(paste <(echo ${results[$key]:-} | tr ' ' '\n') <(echo "$one_live") <(echo ${results[$replay_key]:-} | tr ' ' '\n') \
          <(echo "$one_replay") | awk '$2 > 0 && $3 > 0 && $4 > 0 { print ($1 / $2) / ($3 / $4) }' | median)
        printf '; two workers / one: live %.2fx, replay %.2fx (the ceiling): %.2f of it reached' "$two_live" "$two_replay" "$of_ceiling"
        if [[ $mode == 2sw && -n ${DISPATCH_BOUND:-} ]]; then
          # The software dispatcher's own bound, from a CALLGRIND=1 run of the same binary (its summary's
          # "two workers / one at most"): the receiving worker's instructions a packet against one worker's.
          printf '; the dispatcher'"'"'s bound %sx (CALLGRIND=1): %.2f of it reached' "$DISPATCH_BOUND" \
            "$(awk -v a="$two_live" -v b="$DISPATCH_BOUND" 'BEGIN { print (b > 0 ? a / b : 0) }')"
        fi
      fi
      [[ -n ${invalids[$key]:-} ]] &&
        printf '; INVALID in %s of %s repetitions: the function dropped more than one worker did (the runs above)' "${#invalids[$key]}" "$reps"
      echo
    done
  done
done
exit "$failed"
