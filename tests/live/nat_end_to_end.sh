#!/usr/bin/env bash
# End to end, the NAT live on DPDK ports: a private client reaches a public server through flowtrack.
#
#   client 10.20.1.2 (gateway 10.20.1.1) --- [port 0 10.20.1.1 | flowtrack | port 1 10.20.2.1] --- server 10.20.2.2
#                                                      pool address 10.20.2.100
#
# TCP (100 curl requests), UDP (datagrams to an echo server that answers with the address it saw;
# iperf3 -u for a second) and ping must all work, the servers must see the pool address only, and after
# the idle timeouts (2 s here) the mappings must be gone (flowtrack's report: no live session). With two
# workers, a 2 s iperf3 TCP transfer must lose no frame between them (no handoff_full).
#
# The boundary: the server then routes the private network via the NAT's outside address, as a host
# on the outside could; its pings, SYNs and datagrams at the client must not arrive (a capture on the
# client's side counts them) and are counted as not_to_pool; datagrams the client sends from a forged
# source must not reach the server and are counted as spoofed_source.
#
# Then port exhaustion: flowtrack again, with two external ports per protocol (per worker: the client's
# worker has two). Two UDP flows and two
# TCP connections (HTTP keep-alive) take them; a third of each is refused at once (icmp_on_exhaustion:
# the client gets "administratively prohibited", no timeout) and counted as no_port in `flowtrack ctl
# counters`, while the first two go on answering. The counters read through DPDK telemetry and as
# Prometheus text must agree with `flowtrack ctl counters`.
#
# Usage: nat_end_to_end.sh path/to/flowtrack. Exit 77: skipped.
set -uo pipefail
bin=${1:?usage: nat_end_to_end.sh path/to/flowtrack}
source "$(dirname "$0")/live_lib.sh"
live_init nginx curl ping iperf3 dpdk-telemetry.py

live_nat_network
live_nginx server web 10.20.2.2 public
# A UDP echo server that answers each datagram with the address and port it came from.
live_spawn server python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.20.2.2", 5353))
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(f"{peer[0]}:{peer[1]}".encode(), peer)
'

cat > "$work/nat.toml" << 'CONF'
[nat]
inside = "10.20.1.0/24"
pool = ["10.20.2.100"]
below_rfc_minimums = true           # 2 s timeouts: the test watches mappings end
[timeouts]
udp_unreplied = 2
udp_replied = 2
icmp = 2
tcp_fin_wait = 2
tcp_close_wait = 2
tcp_last_ack = 2
tcp_time_wait = 2
tcp_close = 2
[dataplane]
stats_interval = 1
[[dataplane.port]]
device = "net_af_packet0"
address = "10.20.1.1/24"
role = "inside"
[[dataplane.port]]
device = "net_af_packet1"
address = "10.20.2.1/24"
role = "outside"
CONF
live_start_flowtrack nf nat "$work/nat.toml" f0 f1

urls=()
for _ in $(seq 100); do urls+=(http://10.20.2.2/); done
ip netns exec "$tag-client" curl -s --max-time 5 -H 'Connection: close' -w '%{http_code}\n' "${urls[@]}" > "$work/answers"
tcp_ok=$(grep -c '^200$' "$work/answers")
udp_seen=$(ip netns exec "$tag-client" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
seen = []
for i in range(5):
    s.sendto(b"hello", ("10.20.2.2", 5353))
    try: seen.append(s.recv(2048).decode())
    except socket.timeout: seen.append("lost")
print(" ".join(seen))
')
# iperf3 UDP, 1 s at 10 Mbit/s (about 900 datagrams): the server, which reports whom it served, runs
# for this one test.
live_iperf3_server server 10.20.2.2 -J --logfile "$work/iperf3-server.json"
ip netns exec "$tag-client" iperf3 -c 10.20.2.2 -u -b 10M -t 1 -J > "$work/iperf3-client.json"
iperf3_status=$?
iperf3_udp=$(python3 -c '
import json, sys
try:
    end = json.load(open(sys.argv[1]))["end"]["sum"]
    print(end["packets"], end["lost_packets"], round(end["lost_percent"], 1))
except Exception:
    print("none none none")
' "$work/iperf3-client.json")
ping_ok=$(ip netns exec "$tag-client" ping -c 3 -i 0.2 -W 2 10.20.2.2 | grep -c 'bytes from 10.20.2.2')
# Bulk TCP between two workers: af_packet's fanout puts a flow's data and its ACKs on either worker's
# queue, and the owner takes in what the other hands it.
if ((live_workers > 1)); then
  live_iperf3_server server 10.20.2.2
  ip netns exec "$tag-client" iperf3 -c 10.20.2.2 -t 2 -J > "$work/iperf3-tcp.json" || live_fail "iperf3 TCP failed"
fi
# The boundary, from both sides.
ip -n "$tag-server" route add 10.20.1.0/24 via 10.20.2.1
live_capture client c0 inside 10.20.2.2
live_capture server s0 outside 192.0.2.9
live_probe server 10.20.1.2
live_probe client 10.20.2.2 192.0.2.9
reached_inside=$(live_captured inside)
reached_outside=$(live_captured outside)
sleep 4  # past every idle timeout
live_stop_flowtrack

peers=$(sort -u "$work/web/access.log" | tr '\n' ' ')
iperf3_peer=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["start"]["connected"][0]["remote_host"])' \
  "$work/iperf3-server.json" 2> /dev/null)
read -r udp_sent udp_lost udp_lost_percent <<< "$iperf3_udp"
echo "nat end to end: TCP $tcp_ok of 100 requests answered; UDP echoes: $udp_seen; ping $ping_ok of 3; server saw: $peers"
echo "  iperf3 UDP 10 Mbit/s for 1 s: $udp_sent datagrams, $udp_lost lost ($udp_lost_percent %); its server saw ${iperf3_peer:-nothing}"
echo "  boundary: of 15 probes from outside, $reached_inside reached the client; of 3 forged from inside, $reached_outside reached the server"
((live_workers > 1)) && live_handoff_summary "$work/iperf3-tcp.json"
[[ $tcp_ok -eq 100 ]] || live_fail "$((100 - tcp_ok)) TCP requests failed"
[[ $ping_ok -eq 3 ]] || live_fail "ping: $ping_ok of 3 answered"
[[ $peers == "10.20.2.100 " ]] || live_fail "the server saw other addresses than the pool's: $peers"
[[ $iperf3_status -eq 0 && $udp_sent != none && $udp_lost -lt $udp_sent ]] || live_fail "iperf3 UDP did not get through"
[[ $iperf3_peer == 10.20.2.100 ]] || live_fail "iperf3's server saw ${iperf3_peer:-no client}, not the pool address"
for echo in $udp_seen; do
  [[ $echo == 10.20.2.100:* ]] || live_fail "UDP: an echo shows '$echo', not the pool address"
done
[[ $reached_inside == 0 ]] || live_fail "$reached_inside probes from outside reached the inside host"
[[ $reached_outside == 0 ]] || live_fail "$reached_outside forged datagrams reached the outside host"
live_report_check 'r["mbufs_missing"] == 0' 'r["connections"] >= 102' 'r["connections_live"] == 0' 'r["arp_answered"] > 0' \
  'r["drops"].get("not_to_pool", 0) >= 15' 'r["drops"].get("spoofed_source", 0) >= 3' '"handoff_full" not in r["drops"]'

# Port exhaustion: the same network, two ports per worker (each worker allocates from its own slice,
# and one inside address is always served by one worker: the client gets two).
last_port=$((40000 + 2 * live_workers - 1))
sed -e "s/^pool = .*/&\nports = [40000, $last_port]\nicmp_on_exhaustion = true/" \
  -e "s|^stats_interval = 1|&\ncontrol_socket = \"$work/ctl.sock\"\nmetrics = \"127.0.0.1:9469\"|" "$work/nat.toml" > "$work/nat-tiny.toml"
live_start_flowtrack nf nat "$work/nat-tiny.toml" f0 f1
exhaustion=$(ip netns exec "$tag-client" python3 -c '
import errno, http.client, socket
def udp(s):
    try:
        s.send(b"hello")
        return s.recv(2048).decode()
    except OSError as e:
        return "refused:" + errno.errorcode[e.errno] if e.errno else "lost"
def tcp(c):
    try:
        c.request("GET", "/")
        r = c.getresponse()
        r.read()
        return str(r.status)
    except OSError as e:
        return "refused:" + errno.errorcode[e.errno] if e.errno else "lost"
flows = []
for _ in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect(("10.20.2.2", 5353))  # connected: an ICMP error reaches recv()
    flows.append(s)
conns = [http.client.HTTPConnection("10.20.2.2", 80, timeout=2) for _ in range(3)]
print(" ".join([udp(s) for s in flows] + [udp(s) for s in flows[:2]]))
print(" ".join([tcp(c) for c in conns] + [tcp(c) for c in conns[:2]]))
')
counters=$("$bin" ctl --socket "$work/ctl.sock" counters) || live_fail "ctl counters was refused"
live_counters_agree nf
live_stop_flowtrack
udp_flows=($(sed -n 1p <<< "$exhaustion"))
tcp_flows=($(sed -n 2p <<< "$exhaustion"))
echo "nat port exhaustion (ports 40000-$last_port, $live_workers worker(s)): UDP ${udp_flows[*]}; HTTP ${tcp_flows[*]} (first, second, third flow, then the first two again)"
echo "  ctl counters: $counters"
in_pool() { [[ $1 == 10.20.2.100:* ]] && ((${1#*:} >= 40000 && ${1#*:} <= last_port)); }
in_pool "${udp_flows[0]}" && in_pool "${udp_flows[1]}" && [[ ${udp_flows[0]} != "${udp_flows[1]}" ]] ||
  live_fail "UDP: the first two flows did not get two ports of the pool"
[[ ${udp_flows[2]} == refused:* ]] || live_fail "UDP: the third flow was not refused: ${udp_flows[2]}"
[[ ${udp_flows[3]} == "${udp_flows[0]}" && ${udp_flows[4]} == "${udp_flows[1]}" ]] || live_fail "UDP: the first two flows stopped working"
[[ ${tcp_flows[*]} == "200 200 refused:"*" 200 200" ]] || live_fail "TCP: expected 200 200 refused 200 200"
python3 -c 'import json, sys; sys.exit(0 if json.loads(sys.argv[1])["drops"].get("no_port", 0) >= 2 else 1)' "$counters" ||
  live_fail "ctl counters show no no_port drops"
live_report_check 'r["mbufs_missing"] == 0' 'r["drops"]["no_port"] >= 2' 'r["connections"] == 4'
echo "PASS"
