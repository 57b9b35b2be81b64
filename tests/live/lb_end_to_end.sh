#!/usr/bin/env bash
# End to end, the stateful LB live on DPDK ports: a client namespace, flowtrack on two veth ports
# (net_af_packet) in a namespace of its own, three nginx backends behind a VIP on a bridged LAN:
#
#   client 10.10.1.2 --- [port 0 10.10.1.1, VIP 10.10.1.100 | flowtrack | port 1 10.10.2.1] --- bridge
#                                                  backends 10.10.2.11, .12, .13 (gateway 10.10.2.1)
#
# No static neighbour entry anywhere: the client resolves the VIP and the backends their gateway by ARP,
# which flowtrack answers; flowtrack resolves the backends by ARP. 1000 curl requests (a connection
# each) must all succeed, each backend must get its weight's share (1:2:3, round_robin) within 2 % of
# the requests, and flowtrack must stop cleanly on SIGINT with every mbuf back in its pool.
#
# Usage: lb_end_to_end.sh path/to/flowtrack (REQUESTS=N to change the count). Exit 77: skipped.
set -uo pipefail
bin=${1:?usage: lb_end_to_end.sh path/to/flowtrack}
requests=${REQUESTS:-1000}
source "$(dirname "$0")/live_lib.sh"
live_init nginx curl

live_ns client nf lan b1 b2 b3
live_veth client c0 nf f0
live_veth nf f1 lan l0
ip -n "$tag-client" addr add 10.10.1.2/24 dev c0
ip -n "$tag-lan" link add br0 type bridge
ip -n "$tag-lan" link set br0 up
ip -n "$tag-lan" link set l0 master br0
for b in 1 2 3; do
  live_veth b$b e0 lan l$b
  ip -n "$tag-lan" link set l$b master br0
  ip -n "$tag-b$b" addr add 10.10.2.1$b/24 dev e0
  ip -n "$tag-b$b" route add default via 10.10.2.1
  live_nginx b$b b$b 10.10.2.1$b b$b
done

cat > "$work/lb.toml" << 'CONF'
[lb]
policy = "round_robin"
[[service]]
name = "web"
vip = "10.10.1.100"
port = 80
protocol = "tcp"
  [[service.backend]]
  name = "b1"
  address = "10.10.2.11"
  weight = 1
  [[service.backend]]
  name = "b2"
  address = "10.10.2.12"
  weight = 2
  [[service.backend]]
  name = "b3"
  address = "10.10.2.13"
  weight = 3
[dataplane]
stats_interval = 1
[[dataplane.port]]
device = "net_af_packet0"
address = "10.10.1.1/24"
[[dataplane.port]]
device = "net_af_packet1"
address = "10.10.2.1/24"
CONF
live_start_flowtrack nf lb "$work/lb.toml" f0 f1

urls=()
for _ in $(seq "$requests"); do urls+=(http://10.10.1.100/); done
start=$(date +%s%N)
# One connection per request (Connection: close), each answered by the backend's name, then the status.
ip netns exec "$tag-client" curl -s --max-time 5 -H 'Connection: close' -w '%{http_code}\n' "${urls[@]}" > "$work/answers"
ms=$((($(date +%s%N) - start) / 1000000))
live_stop_flowtrack

ok=$(grep -c '^200$' "$work/answers")
declare -A got
for b in 1 2 3; do got[$b]=$(grep -c "^b$b\$" "$work/answers"); done
echo "lb end to end: $ok of $requests requests answered 200 in $ms ms; b1 ${got[1]}, b2 ${got[2]}, b3 ${got[3]} (weights 1:2:3)"
[[ $ok -eq $requests ]] || live_fail "$((requests - ok)) requests failed"
tolerance=$((requests * 2 / 100))
for b in 1 2 3; do
  expected=$((requests * b / 6))
  diff=$((got[$b] - expected))
  ((diff < 0)) && diff=$((-diff))
  ((diff <= tolerance)) || live_fail "backend b$b got ${got[$b]} requests, expected $expected +- $tolerance"
done
live_report_check 'r["mbufs_missing"] == 0' "sum(r['backends'].values()) == $requests" 'r["arp_answered"] > 0'
echo "PASS"
