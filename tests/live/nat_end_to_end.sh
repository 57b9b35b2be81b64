#!/usr/bin/env bash
# End to end, the NAT live on DPDK ports: a private client reaches a public server through flowtrack.
#
#   client 10.20.1.2 (gateway 10.20.1.1) --- [port 0 10.20.1.1 | flowtrack | port 1 10.20.2.1] --- server 10.20.2.2
#                                                      pool address 10.20.2.100
#
# The server has no route to the private network: only answers to the pool address, which flowtrack
# answers ARP for, can come back. TCP (100 curl requests), UDP (datagrams to an echo server that
# answers with the address it saw) and ping must all work, the server must see the pool address only,
# and after the idle timeouts (2 s here) the mappings must be gone (flowtrack's report: no live session).
#
# Usage: nat_end_to_end.sh path/to/flowtrack. Exit 77: skipped.
set -uo pipefail
bin=${1:?usage: nat_end_to_end.sh path/to/flowtrack}
source "$(dirname "$0")/live_lib.sh"
live_init nginx curl ping

live_ns client nf server
live_veth client c0 nf f0
live_veth nf f1 server s0
ip -n "$tag-client" addr add 10.20.1.2/24 dev c0
ip -n "$tag-client" route add default via 10.20.1.1
ip -n "$tag-server" addr add 10.20.2.2/24 dev s0
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
[[dataplane.port]]
device = "net_af_packet1"
address = "10.20.2.1/24"
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
ping_ok=$(ip netns exec "$tag-client" ping -c 3 -i 0.2 -W 2 10.20.2.2 | grep -c 'bytes from 10.20.2.2')
sleep 4  # past every idle timeout
live_stop_flowtrack

peers=$(sort -u "$work/web/access.log" | tr '\n' ' ')
echo "nat end to end: TCP $tcp_ok of 100 requests answered; UDP echoes: $udp_seen; ping $ping_ok of 3; server saw: $peers"
[[ $tcp_ok -eq 100 ]] || live_fail "$((100 - tcp_ok)) TCP requests failed"
[[ $ping_ok -eq 3 ]] || live_fail "ping: $ping_ok of 3 answered"
[[ $peers == "10.20.2.100 " ]] || live_fail "the server saw other addresses than the pool's: $peers"
for echo in $udp_seen; do
  [[ $echo == 10.20.2.100:* ]] || live_fail "UDP: an echo shows '$echo', not the pool address"
done
live_report_check 'r["mbufs_missing"] == 0' 'r["connections"] >= 102' 'r["connections_live"] == 0' 'r["arp_answered"] > 0'
echo "PASS"
