#!/usr/bin/env bash
# A NAT restarted with its state: connections through it go on, through the same public ports.
#
#   client 10.20.1.2 --- [port 0 10.20.1.1 | flowtrack nat | port 1 10.20.2.1] --- server 10.20.2.2
#                                               pool address 10.20.2.100, blocks of 64 ports
#
# The client opens 20 TCP connections to an echo server that answers each line with the address and
# port it sees, and keeps them open. A new flowtrack takes over from the running one (`run --state FILE
# --take-over`, runtime/hand_over.hpp: it starts while the running one forwards, then takes its state
# over the control socket); meanwhile a UDP prober exchanges a datagram every 10 ms with an echo
# service of the server through the NAT, and the client keeps its connections. Every connection must
# go on answering, the server seeing each from the same public address and port as before the
# restart, none reset; the forwarding gap (the prober's longest silence) must be at most 1 s; neither
# run loses an mbuf. The block log must name the client as the holder of those ports, and the restart
# must say what it restored. Then the state file, corrupted, must be refused with its reason (exit
# status 2) before any port is touched.
#
# Usage: nat_restart.sh path/to/flowtrack. Exit 77: skipped.
set -uo pipefail
bin=${1:?usage: nat_restart.sh path/to/flowtrack}
source "$(dirname "$0")/live_lib.sh"
live_init

live_nat_network
live_echo_server server 10.20.2.2 7000
live_spawn server python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.20.2.2", 7))
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)
'

cat > "$work/nat.toml" << CONF
[nat]
inside = "10.20.1.0/24"
pool = ["10.20.2.100"]
block_size = 64
block_log = "$work/blocks.jsonl"
[dataplane]
stats_interval = 1
control_socket = "$work/ctl.sock"
$(live_nat_ports)
CONF
state=$work/nat.state
live_flowtrack_args=(--state "$state" --start-empty)
live_start_flowtrack nf nat "$work/nat.toml" f0 f1
live_gap_probe client 10.20.2.2 7 restart

# The client: 20 connections, one exchange each ("before"), then, once $work/restarted exists, another
# ("after"); an error is printed in place of the peer (a reset: "error:ECONNRESET").
ip netns exec "$tag-client" python3 -c '
import errno, os, socket, sys, time
def ask(c):
    try:
        c.sendall(b"x\n")
        return c.makefile("rb").readline().decode().strip() or "closed"
    except OSError as e:
        return "error:" + (errno.errorcode.get(e.errno, "timeout") if e.errno else "timeout")
conns = []
for _ in range(20):
    c = socket.create_connection(("10.20.2.2", 7000), timeout=15)
    conns.append(c)
with open(sys.argv[1] + "/before", "w") as f:
    f.write(" ".join(ask(c) for c in conns) + "\n")
for _ in range(300):
    if os.path.exists(sys.argv[1] + "/restarted"):
        break
    time.sleep(0.1)
with open(sys.argv[1] + "/after", "w") as f:
    f.write(" ".join(ask(c) for c in conns) + "\n")
' "$work" &
client=$!
for _ in $(seq 100); do
  [[ -s $work/before ]] && break
  sleep 0.1
done
[[ -s $work/before ]] || live_fail "the client's connections did not get through"
sleep 0.5  # the prober's answers before the hand-over
live_flowtrack_args=(--state "$state")
live_take_over nf nat "$work/nat.toml" f0 f1
restored=$(sed -n 's/^flowtrack live: \(state file .*restored.*\)/\1/p' "$work/flowtrack.err")
touch "$work/restarted"
wait "$client"
sleep 0.5  # and after
gap=$(live_gap restart)
live_stop_flowtrack

read -r -a before < "$work/before"
read -r -a after < "$work/after"
first_port=${before[0]#*:}
holder=$("$bin" nat-log who "10.20.2.100:$first_port" "$(date +%s)" --json --log "$work/blocks.jsonl")
echo "nat restart: $restored; longest UDP silence $gap s"
echo "  before: ${before[*]}"
echo "  after:  ${after[*]}"
echo "  nat-log who 10.20.2.100:$first_port now: $holder"
[[ -n $restored ]] || live_fail "the restart did not say what it restored"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 1.0 else 1)' "$gap" || live_fail "a forwarding gap of $gap s across the hand-over, over 1 s"
python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["mbufs_missing"] == 0 else 1)' "$work/report.handed.json" ||
  live_fail "the flowtrack that handed over lost mbufs"
((${#before[@]} == 20)) || live_fail "${#before[@]} of 20 connections answered before the restart"
resets=$(grep -o 'error:ECONNRESET' "$work/after" | wc -l)
((resets == 0)) || live_fail "$resets of 20 connections were reset across the restart"
for i in "${!before[@]}"; do
  [[ ${before[i]} == 10.20.2.100:* ]] || live_fail "connection $i: the server saw ${before[i]}, not the pool address"
  [[ ${after[i]:-none} == "${before[i]}" ]] || live_fail "connection $i: ${before[i]} before the restart, ${after[i]:-none} after"
done
python3 -c 'import json, sys; sys.exit(0 if json.loads(sys.argv[1]).get("inside") == "10.20.1.2" else 1)' "$holder" ||
  live_fail "the block log does not name the client as the holder of port $first_port"
live_report_check 'r["mbufs_missing"] == 0' 'r["connections_live"] == 21'  # the 20 and the prober's

# The state file corrupted: refused before the EAL starts, with its reason.
python3 -c '
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[-1] ^= 0xff
open(sys.argv[1], "wb").write(data)
' "$state"
ip netns exec "$tag-nf" "$bin" run --nf nat --config "$work/nat.toml" --dpdk "--no-huge" --state "$state" > /dev/null 2> "$work/refused.err"
refused_status=$?
echo "  corrupted state file: status $refused_status, $(cat "$work/refused.err")"
[[ $refused_status -eq 2 ]] || live_fail "a corrupted state file: exit status $refused_status, not 2"
grep -q "corrupt" "$work/refused.err" || live_fail "a corrupted state file was not refused as corrupt"
echo "PASS"
