#!/usr/bin/env bash
# Hand-offs between two workers under bulk TCP, binary against binary (docs/performance/live.md): one
# iperf3 TCP transfer of 5 s through the NAT on two workers (net_af_packet, qpairs=2) per binary and
# round, the binaries alternating, REPS rounds (default 3). Each binary is NAME=PATH, or
# NAME=PATH:roles for one that takes the ports' roles (a build before them refuses the key). Prints a
# line a run: the transfer's rate, frames handed between the workers, handoff_full, handoff_backoffs.
# PIN=CPU runs flowtrack on that CPU alone (both workers on one core). As root.
#
# Usage: scripts/live-handoff-ab.sh main=../main/build/flowtrack new=build/flowtrack:roles
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=/bin/true  # each run's binary is set below
source "$root/tests/live/live_lib.sh"
live_init iperf3
live_workers=2
[[ -n ${PIN:-} ]] && live_flowtrack_prefix="taskset -c $PIN"
live_nat_network

# The NAT's configuration, with the ports' roles ($1 = 1) or without.
nat_config() {
  local inside= outside=
  [[ $1 == 1 ]] && inside='role = "inside"' && outside='role = "outside"'
  printf '%s\n' '[nat]' 'inside = "10.20.1.0/24"' 'pool = ["10.20.2.100"]' '[dataplane]' 'stats_interval = 1' \
    '[[dataplane.port]]' 'device = "net_af_packet0"' 'address = "10.20.1.1/24"' "$inside" \
    '[[dataplane.port]]' 'device = "net_af_packet1"' 'address = "10.20.2.1/24"' "$outside"
}

for round in $(seq "${REPS:-3}"); do
  for spec in "$@"; do
    name=${spec%%=*}
    path=${spec#*=}
    bin=${path%:roles}
    nat_config "$([[ $path == *:roles ]] && echo 1 || echo 0)" > "$work/nat.toml"
    live_start_flowtrack nf nat "$work/nat.toml" f0 f1
    live_iperf3_server server 10.20.2.2
    ip netns exec "$tag-client" iperf3 -c 10.20.2.2 -t 5 -J > "$work/iperf3.json"
    live_stop_flowtrack > /dev/null
    python3 - "$name" "$round" "$work/iperf3.json" "$work/report.json" << 'PY'
import json, sys
name, round_, iperf, report = sys.argv[1:]
tcp = json.load(open(iperf))["end"]["sum_received"]
r = json.load(open(report))
print(f"{name} round {round_}: {tcp['bits_per_second'] / 1e6:.0f} Mbit/s, handed_off {r['handed_off']}, "
      f"handoff_full {r['drops'].get('handoff_full', 0)}, handoff_backoffs {r.get('handoff_backoffs', '-')}, drops {r['drops']}")
PY
  done
done
