#!/usr/bin/env bash
# Where a live LB restart's forwarding gap goes: the timeline of one restart, every line of the two
# processes' stderr stamped with the Unix time, beside the longest silence of a UDP prober (a datagram
# every 5 ms through the LB to an echo service: the forwarding gap).
#
#   sudo scripts/restart-timeline.sh BUILD/flowtrack [stop|hand-over] [BUSY]
#
# stop: SIGINT (the state written at the stop), then a new process started with --state FILE: the gap
# holds the old process's stop and exit, the new one's start, its EAL and ports, its workers' start.
# hand-over: the new process started with --take-over while the old one forwards (runtime/
# hand_over.hpp): the gap holds the pause, the state's save and load, the workers' start. BUSY: that many
# busy loops run beside it from the restart on (a loaded machine). One connection's state (the prober's).
# Needs root (namespaces, veths; tests/live/live_lib.sh builds the network).
set -uo pipefail
bin=${1:?usage: restart-timeline.sh BUILD/flowtrack [stop|hand-over] [BUSY]}
mode=${2:-hand-over}
busy=${3:-0}
source "$(dirname "$0")/../tests/live/live_lib.sh"
live_init
live_lb_network
for b in 1 2 3; do ip -n "$tag-b$b" route add default via 10.10.2.1; done
live_udp_servers 7
{
  printf '[lb]\npolicy = "maglev"\n[[service]]\nname = "echo"\nvip = "10.10.1.100"\nport = 7\nprotocol = "udp"\n'
  for b in 1 2 3; do printf '  [[service.backend]]\n  name = "u%s"\n  address = "10.10.2.1%s"\n' $b $b; done
  printf '[dataplane]\ncontrol_socket = "%s"\n' "$work/ctl.sock"
  live_lb_ports
} > "$work/lb.toml"

stamp() { while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done; }
# start NAME OPTION...: flowtrack with its own EAL file prefix, its stderr stamped into the timeline.
start() {
  local name=$1
  shift
  local eal="--no-huge --no-pci --no-shconf --file-prefix=$tag$name -l 0 -m 256 --log-level=error"
  eal+=" --vdev=net_af_packet0,iface=f0,qpairs=1 --vdev=net_af_packet1,iface=f1,qpairs=1"
  echo "$EPOCHREALTIME exec $name" >> "$work/timeline"
  ip netns exec "$tag-nf" "$bin" run --nf lb --config "$work/lb.toml" --json --dpdk "$eal" --state "$work/lb.state" "$@" \
    > "$work/report.$name.json" 2> >(stamp >> "$work/timeline") &
  flowtrack_pid=$!
}
cleanup_prefixes() { rm -rf "/var/run/dpdk/${tag}a" "/var/run/dpdk/${tag}b"; }
trap 'live_cleanup; cleanup_prefixes' EXIT

start a --start-empty
sleep 3
live_gap_probe client 10.10.1.100 7 restart
sleep 2
for ((i = 0; i < busy; i++)); do
  python3 -c 'while True: pass' &
  live_pids+=($!)
done
old=$flowtrack_pid
live_pids+=("$old")
if [[ $mode == stop ]]; then
  echo "$EPOCHREALTIME SIGINT" >> "$work/timeline"
  kill -INT "$old"
  wait "$old"
  echo "$EPOCHREALTIME exited (state file written at $(stat -c %.Y "$work/lb.state"))" >> "$work/timeline"
  start b
else
  start b --take-over
  for _ in $(seq 200); do
    kill -0 "$old" 2> /dev/null || break
    sleep 0.05
  done
  wait "$old"
  echo "$EPOCHREALTIME the old process exited" >> "$work/timeline"
fi
for _ in $(seq 200); do  # until the new process has its ports (after the hand-over: long before), then 2 s
  sed -n '/exec b/,$p' "$work/timeline" | grep -q "port 1 " && break
  sleep 0.1
done
sleep 2
gap=$(live_gap restart)
echo "$EPOCHREALTIME longest silence of the prober: $gap s, ended at $(cat "$work/gap.restart.ended")" >> "$work/timeline"
grep -v "Mpps" "$work/timeline"
