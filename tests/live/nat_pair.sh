#!/usr/bin/env bash
# A NAT pair fails over: the active is killed (kill -9) under traffic and the standby takes over its
# connections; the same run without state sync breaks them all.
#
#                        +-- f0 [nfa: flowtrack nat, active ] f1 --+
#   client 10.20.1.2 br0-+             m0 | sync link 10.20.9.0/30 +-br0 server 10.20.2.2
#                        +-- f0 [nfb: flowtrack nat, standby] f1 --+
#
# Both NATs have the same addresses (inside gateway 10.20.1.1, outside 10.20.2.1, pool 10.20.2.100) on
# their DPDK ports, on the client's and the server's bridges; only the active answers ARP. The sync
# link is a kernel UDP socket on m0, the management link between them.
#
# With sync: 50 TCP connections exchange a line every 100 ms with an echo server that answers with the
# peer it sees, `iperf3 -u` sends 1 Mbit/s and a ping runs every 100 ms, all through the active; a
# forged and a replayed datagram are sent to the standby's sync port (refused and counted); the active
# is killed at t = 5 s. All 50 connections must go on exchanging after the takeover, the server seeing
# each from the same public address and port as before; UDP may be lost only within a window of at
# most 1 s; the ping loses at most 1 s of echoes. Without sync, the same 50 connections must all break.
#
# Usage: nat_pair.sh path/to/flowtrack. Exit 77: skipped.
set -uo pipefail
bin=${1:?usage: nat_pair.sh path/to/flowtrack}
source "$(dirname "$0")/live_lib.sh"
live_init iperf3 ping
pair_cleanup() {
  rm -rf "/var/run/dpdk/${tag}a" "/var/run/dpdk/${tag}b"  # the two runs' EAL runtime directories
  live_cleanup
}
trap pair_cleanup EXIT

live_ns client server nfa nfb
for side in client server; do
  ip -n "$tag-$side" link add br0 type bridge
  ip -n "$tag-$side" link set br0 up
done
for nf in a b; do
  live_veth nf$nf f0 client c$nf
  live_veth nf$nf f1 server s$nf
  ip -n "$tag-client" link set c$nf master br0
  ip -n "$tag-server" link set s$nf master br0
done
for side in client server; do ip netns exec "$tag-$side" ethtool -K br0 tx off > /dev/null; done
live_veth nfa m0 nfb m0
ip -n "$tag-nfa" addr add 10.20.9.1/30 dev m0
ip -n "$tag-nfb" addr add 10.20.9.2/30 dev m0
ip -n "$tag-client" addr add 10.20.1.2/24 dev br0
ip -n "$tag-client" route add default via 10.20.1.1
ip -n "$tag-server" addr add 10.20.2.2/24 dev br0

head -c 32 /dev/urandom > "$work/pair.key"
chmod 600 "$work/pair.key"

live_echo_server server 10.20.2.2 7000

# pair_config NAME ROLE LOCAL PEER SYNC SEED: the configuration of NAT NAME. The external ports lie
# below the client's ephemeral ones, so each mapping's port is a random draw (by SEED: each NAT its own,
# as two hosts' NATs have); a NAT with the inside port free would keep it, and a standby without the
# state would then rebuild the very same mappings from the next packets.
pair_config() {
  cat > "$work/nat-$1.toml" << CONF
[nat]
inside = "10.20.1.0/24"
pool = ["10.20.2.100"]
ports = [10000, 29999]
seed = $6
max_sessions = 65536   # a table built in a few ms at the takeover
max_mappings = 16384
[dataplane]
control_socket = "$work/ctl-$1.sock"
$(live_nat_ports)
[dataplane.pair]
role = "$2"
local = "$3:7400"
peer = "$4:7400"
key_file = "$work/pair.key"
dead_interval_ms = 300
sync = $5
CONF
}

# pair_start NAME: NAT NAME (a or b) in namespace nfNAME, once its ports are up; its PID in pid_NAME.
# Each on a CPU of its own where there are two: the active's worker busy-polls its CPU while the
# standby's thread waits for datagrams.
pair_start() {
  local name=$1 _ cpu=0
  [[ $name == b && $(nproc) -gt 1 ]] && cpu=1
  local eal="--no-huge --no-pci --no-shconf --file-prefix=$tag$name -l $cpu -m 256 --log-level=error"
  eal+=" --vdev=net_af_packet0,iface=f0 --vdev=net_af_packet1,iface=f1"
  ip netns exec "$tag-nf$name" "$bin" run --nf nat --config "$work/nat-$name.toml" --json --dpdk "$eal" \
    > "$work/report-$name.json" 2> "$work/flowtrack-$name.err" &
  local pid=$!
  live_pids+=("$pid")
  eval "pid_$name=$pid"
  for _ in $(seq 100); do
    grep -q "port 1" "$work/flowtrack-$name.err" 2> /dev/null && return 0
    kill -0 "$pid" 2> /dev/null || pair_fail "NAT $name exited at start"
    sleep 0.1
  done
  pair_fail "NAT $name did not start its ports within 10 s"
}

pair_fail() {
  local name
  for name in a b; do
    [[ -f $work/flowtrack-$name.err ]] && sed "s/^/  flowtrack $name: /" "$work/flowtrack-$name.err"
  done
  live_fail "$*"
}

# pair_figure NAME EXPRESSION: EXPRESSION of `p`, NAT NAME's pair figures as `ctl counters` has them.
pair_figure() {
  "$bin" ctl --socket "$work/ctl-$1.sock" counters 2> /dev/null |
    python3 -c 'import json, sys; p = json.load(sys.stdin).get("pair", {}); print(eval(sys.argv[1]))' "$2" 2> /dev/null
}

# pair_wait NAME EXPRESSION WHAT: until pair_figure NAME EXPRESSION prints True (5 s at most).
pair_wait() {
  local _
  for _ in $(seq 50); do
    [[ $(pair_figure "$1" "$2") == True ]] && return 0
    sleep 0.1
  done
  pair_fail "$3"
}

# The client: 50 connections, then a line on each every 100 ms for $1 seconds; each connection's
# exchanges ([seconds since the epoch, the peer the server saw or "error:..."]) in $work/tcp.json. An
# exchange without an answer within 3 s is recorded as a timeout; an error ends the connection.
client_start() {
  rm -f "$work/ready" "$work/tcp.json"
  ip netns exec "$tag-client" python3 -c '
import errno, json, socket, sys, threading, time
duration, work = float(sys.argv[1]), sys.argv[2]
conns = [socket.create_connection(("10.20.2.2", 7000), timeout=5) for _ in range(50)]
for c in conns:
    c.settimeout(3)
log = [[] for _ in conns]
start = time.time()
open(work + "/ready", "w").write(f"{start}\n")
def exchange(i):
    c, reader = conns[i], conns[i].makefile("rb")
    while time.time() - start < duration:
        sent = time.time()
        try:
            c.sendall(b"x\n")
            line = reader.readline().decode().strip()
            log[i].append([time.time(), line or "error:closed"])
            if not line:
                return
        except socket.timeout:
            log[i].append([time.time(), "timeout"])
        except OSError as e:
            log[i].append([time.time(), "error:" + errno.errorcode.get(e.errno, str(e.errno))])
            return
        time.sleep(max(0.0, 0.1 - (time.time() - sent)))
threads = [threading.Thread(target=exchange, args=(i,)) for i in range(len(conns))]
for t in threads:
    t.start()
for t in threads:
    t.join()
json.dump(log, open(work + "/tcp.json", "w"))
' "$1" "$work" &
  client_pid=$!
  live_pids+=("$client_pid")
  local _
  for _ in $(seq 100); do
    [[ -s $work/ready ]] && return 0
    sleep 0.1
  done
  pair_fail "the client's 50 connections did not get through the active"
}

# The datagrams an attacker on the management link could send the standby: one forged (a well-formed
# heartbeat under another key) and one replayed (a copy of the active's last, taken off the wire).
attack_standby() {
  ip netns exec "$tag-nfb" python3 -c '
import os, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
forged = b"FTSY" + struct.pack("<BBHQQQQ", 1, 3, 0, 1 << 62, 1, 0, 0) + os.urandom(32)
s.sendto(forged, ("10.20.9.2", 7400))
sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
sniff.bind(("m0", 0))
while True:
    frame, address = sniff.recvfrom(2048)
    ihl = (frame[14] & 0x0F) * 4
    if address[2] == socket.PACKET_OUTGOING or frame[23] != socket.IPPROTO_UDP or frame[26:30] != socket.inet_aton("10.20.9.1"):
        continue
    s.sendto(frame[14 + ihl + 8:], ("10.20.9.2", 7400))
    break
' || pair_fail "could not send the standby a forged and a replayed datagram"
}

# One failover run: both NATs, sync on or off ($1), the traffic, the active killed at 5 s.
failover() {
  local sync=$1
  pair_config a active 10.20.9.1 10.20.9.2 "$sync" 1
  pair_config b standby 10.20.9.2 10.20.9.1 "$sync" 2
  pair_start a
  pair_start b
  pair_wait a 'p.get("role") == "active"' "NAT a (role active, no active peer) did not take over"
  pair_wait b 'p.get("role") == "standby" and p.get("messages_received", 0) > 0' "NAT b does not hear its active"
  if [[ $sync == true ]]; then
    pair_wait b 'p.get("events_applied", 0) >= 2' "NAT b did not get its active's whole state"
    ip netns exec "$tag-server" iperf3 -s -1 -B 10.20.2.2 -J -i 0.1 > "$work/iperf3-server.json" &
    live_pids+=($!)
    local _
    for _ in $(seq 50); do  # until it listens on port 5201 (0x1451)
      ip netns exec "$tag-server" grep -q ':1451 00000000:0000 0A' /proc/net/tcp && break
      sleep 0.1
    done
  fi
  client_start 11
  if [[ $sync == true ]]; then
    ip netns exec "$tag-client" iperf3 -c 10.20.2.2 -u -b 1M -l 1000 -t 10 > /dev/null 2>&1 &
    iperf_client=$!
    live_pids+=("$iperf_client")
    ip netns exec "$tag-client" ping -n -i 0.1 -c 100 10.20.2.2 > "$work/ping.txt" 2>&1 &
    ping_pid=$!
    live_pids+=("$ping_pid")
    attack_standby
  fi
  local ready
  ready=$(cat "$work/ready")
  sleep "$(python3 -c "import sys, time; print(max(0.0, float(sys.argv[1]) + 5 - time.time()))" "$ready")"
  kill -9 "$pid_a"
  local killed
  killed=$(date +%s.%N)
  wait "$pid_a" 2> /dev/null
  if [[ $sync == true ]]; then
    pair_wait b 'p.get("refused", {}).get("forged", 0) >= 1 and p.get("refused", {}).get("replayed", 0) >= 1' \
      "the standby did not count the forged and the replayed datagram as refused"
  fi
  pair_wait b 'p.get("role") == "active" and p.get("takeovers") == 1' "NAT b did not take over"
  echo "  sync $sync: $(grep -h 'pair: taking over' "$work/flowtrack-b.err" | sed 's/^flowtrack live: //')"
  wait "$client_pid"
  if [[ $sync == true ]]; then
    wait "$iperf_client"
    wait "$ping_pid"
    for _ in $(seq 50); do  # the server writes its report once the client's test is over
      python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/iperf3-server.json" 2> /dev/null && break
      sleep 0.1
    done
  fi
  echo "  NAT b: $("$bin" ctl --socket "$work/ctl-b.sock" counters | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["pair"]))')"
  kill -INT "$pid_b"
  wait "$pid_b"
  local status=$?
  [[ $status -eq 0 ]] || pair_fail "NAT b exited with status $status"
  echo "  sync $sync: $(grep -h 'pair: took over' "$work/flowtrack-b.err" | sed 's/^flowtrack live: //')"
  python3 - "$work" "$sync" "$killed" << 'PY' || pair_fail "the failover with sync $sync did not go as it must"
import json, re, sys
work, sync, killed = sys.argv[1], sys.argv[2] == "true", float(sys.argv[3])
log = json.load(open(f"{work}/tcp.json"))
problems, kept = [], 0
for i, exchanges in enumerate(log):
    before = {peer for t, peer in exchanges if t < killed}
    after = [peer for t, peer in exchanges if t > killed + 2]  # the takeover is over by then
    if len(before) != 1 or not next(iter(before)).startswith("10.20.2.100:"):
        problems.append(f"connection {i}: the server saw {sorted(before)} before the kill")
        continue
    same = bool(after) and all(peer in before for peer in after) and not any(p.startswith("error") for t, p in exchanges)
    kept += same
    if sync and not same:
        problems.append(f"connection {i}: {sorted(before)} before, {after[:3]}... after the takeover")
print(f"  sync {'on' if sync else 'off'}: {kept} of {len(log)} TCP connections went on through the same public port")
if not sync and kept != 0:
    problems.append(f"without sync, {kept} connections survived the takeover: the test cannot tell sync from none")
if sync:
    intervals = [i["sum"] for i in json.load(open(f"{work}/iperf3-server.json"))["intervals"]]
    flowing = [n for n, i in enumerate(intervals) if i["packets"] > 0]  # the test's own start and end left out
    intervals = intervals[flowing[0]:flowing[-1] + 1] if flowing else []
    lossy = [i for i in intervals if i["packets"] == 0 or i["lost_packets"] > 0]
    lost = sum(i["lost_packets"] for i in intervals)
    window = lossy[-1]["end"] - lossy[0]["start"] if lossy else 0.0
    print(f"  iperf3 -u: {lost} datagrams lost, within {window:.1f} s (0.1 s intervals with loss or no datagram)")
    if window > 1.0:
        problems.append(f"UDP was lost over {window:.1f} s, more than 1 s")
    ping = open(f"{work}/ping.txt").read()
    m = re.search(r"(\d+) packets transmitted, (\d+) received", ping)
    print(f"  ping every 0.1 s: {m.group(0) if m else 'no summary'}")
    if not m or int(m.group(1)) - int(m.group(2)) > 10:
        problems.append("the ping lost more than 1 s of echoes")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
}

echo "nat pair:"
failover true
failover false
echo "PASS"
