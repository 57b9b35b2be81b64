#!/usr/bin/env bash
# End to end, the stateful LB live on DPDK ports: a client namespace, flowtrack on two veth ports
# (net_af_packet) in a namespace of its own, and three nginx backends behind a VIP on a bridged LAN:
#
#   client 10.10.1.2 --veth-- [port 0 10.10.1.1, VIP 10.10.1.100 | flowtrack | port 1 10.10.2.1] --veth-- bridge
#                                                                       backends 10.10.2.11, .12, .13 (gateway 10.10.2.1)
#
# No static neighbour entry anywhere: the client resolves the VIP and the backends their gateway by ARP,
# which flowtrack answers; flowtrack resolves the backends by ARP. 1000 curl requests (a connection
# each) must all succeed, and each backend must get its weight's share (1:2:3, round_robin) within 2 %
# of the requests; flowtrack must stop cleanly on SIGINT with every mbuf back in its pool.
#
# Usage: lb_end_to_end.sh path/to/flowtrack. Exit 77 (ctest's SKIP) where it cannot run: not root, no
# network namespaces, nginx or curl missing. Everything it creates is named after its PID and removed
# on exit, failure included.
set -uo pipefail
bin=${1:?usage: lb_end_to_end.sh path/to/flowtrack}
requests=${REQUESTS:-1000}

skip() {
  echo "SKIP: $*"
  exit 77
}
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth pairs)"
for tool in nginx curl ethtool ip python3; do
  command -v "$tool" > /dev/null || skip "$tool is not installed (scripts/install-deps.sh installs it)"
done

tag=ftl$$
ns_client=$tag-c ns_nf=$tag-f ns_lan=$tag-l
backends=(1 2 3)
work=$(mktemp -d)
flowtrack_pid=

cleanup() {
  [[ -n $flowtrack_pid ]] && kill "$flowtrack_pid" 2> /dev/null && wait "$flowtrack_pid" 2> /dev/null
  for b in "${backends[@]}"; do
    [[ -s $work/b$b/nginx.pid ]] && kill "$(cat "$work/b$b/nginx.pid")" 2> /dev/null
  done
  for ns in "$ns_client" "$ns_nf" "$ns_lan" "${backends[@]/#/$tag-b}"; do
    ip netns del "$ns" 2> /dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  [[ -f $work/flowtrack.err ]] && sed 's/^/  flowtrack: /' "$work/flowtrack.err"
  exit 1
}

if ! ip netns add "$ns_client" 2> /dev/null; then
  skip "cannot create network namespaces here"
fi
set -e
for ns in "$ns_nf" "$ns_lan" "${backends[@]/#/$tag-b}"; do ip netns add "$ns"; done
for ns in "$ns_client" "$ns_nf" "$ns_lan" "${backends[@]/#/$tag-b}"; do
  # IPv4 only: no IPv6 autoconfiguration chatter on the ports.
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$ns" link set lo up
done

# A veth pair between two namespaces, up, checksum offload off on both ends: a veth otherwise hands
# over TCP and UDP packets whose checksums the sender left for a NIC to finish, and flowtrack's
# incremental checksum updates (as any rewrite of such a packet in software) would keep them wrong.
veth() {  # veth NS1 NAME1 NS2 NAME2
  ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
  for end in "$1 $2" "$3 $4"; do
    set -- $end
    ip netns exec "$1" ethtool -K "$2" tx off rx off > /dev/null
    ip -n "$1" link set "$2" up
  done
}

veth "$ns_client" c0 "$ns_nf" f0
veth "$ns_nf" f1 "$ns_lan" l0
ip -n "$ns_client" addr add 10.10.1.2/24 dev c0
ip -n "$ns_lan" link add br0 type bridge
ip -n "$ns_lan" link set br0 up
ip -n "$ns_lan" link set l0 master br0
for b in "${backends[@]}"; do
  veth "$tag-b$b" e0 "$ns_lan" l$b
  ip -n "$ns_lan" link set l$b master br0
  ip -n "$tag-b$b" addr add 10.10.2.1$b/24 dev e0
  ip -n "$tag-b$b" route add default via 10.10.2.1
  mkdir -p "$work/b$b"
  cat > "$work/b$b/nginx.conf" << CONF
worker_processes 1;
pid $work/b$b/nginx.pid;
error_log $work/b$b/error.log;
events { worker_connections 256; }
http {
  access_log off;
  server {
    listen 10.10.2.1$b:80;
    location / { return 200 "b$b\n"; }
  }
}
CONF
  ip netns exec "$tag-b$b" nginx -p "$work/b$b" -e "$work/b$b/error.log" -c "$work/b$b/nginx.conf"
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
set +e

eal="--no-huge --no-pci --no-shconf --no-telemetry -l 0 -m 256 --log-level=error"
eal+=" --vdev=net_af_packet0,iface=f0 --vdev=net_af_packet1,iface=f1"
ip netns exec "$ns_nf" "$bin" run --nf lb --config "$work/lb.toml" --json --dpdk "$eal" \
  > "$work/report.json" 2> "$work/flowtrack.err" &
flowtrack_pid=$!
for _ in $(seq 100); do  # up when it prints its ports (stderr, with --json)
  grep -q "port 1" "$work/flowtrack.err" && break
  kill -0 "$flowtrack_pid" 2> /dev/null || fail "flowtrack exited at start"
  sleep 0.1
done
grep -q "port 1" "$work/flowtrack.err" || fail "flowtrack did not start its ports within 10 s"

start=$(date +%s%N)
urls=()
for _ in $(seq "$requests"); do urls+=(http://10.10.1.100/); done
# One connection per request (Connection: close), each answered by the backend's name, then the status.
ip netns exec "$ns_client" curl -s --max-time 5 -H 'Connection: close' -w '%{http_code}\n' "${urls[@]}" > "$work/answers"
ms=$((($(date +%s%N) - start) / 1000000))

kill -INT "$flowtrack_pid"
wait "$flowtrack_pid"
status=$?
flowtrack_pid=

ok=$(grep -c '^200$' "$work/answers")
declare -A got
for b in "${backends[@]}"; do got[$b]=$(grep -c "^b$b\$" "$work/answers"); done
echo "lb end to end: $ok of $requests requests answered 200 in $ms ms; b1 ${got[1]}, b2 ${got[2]}, b3 ${got[3]} (weights 1:2:3)"
sed -n 's/^flowtrack live: \(.*\)/  flowtrack: \1/p' "$work/flowtrack.err" | tail -3
echo "  report: $(cat "$work/report.json")"
[[ $status -eq 0 ]] || fail "flowtrack exited with status $status"
[[ $ok -eq $requests ]] || fail "$((requests - ok)) requests failed"
tolerance=$((requests * 2 / 100))
for b in "${backends[@]}"; do
  expected=$((requests * b / 6))
  diff=$((got[$b] - expected))
  ((diff < 0)) && diff=$((-diff))
  ((diff <= tolerance)) || fail "backend b$b got ${got[$b]} requests, expected $expected +- $tolerance"
done
python3 - "$work/report.json" "$requests" << 'PY' || fail "flowtrack's report disagrees"
import json, sys
report = json.load(open(sys.argv[1]))
requests = int(sys.argv[2])
problems = []
if report["mbufs_missing"] != 0: problems.append(f"{report['mbufs_missing']} mbufs missing")
if sum(report["backends"].values()) != requests: problems.append(f"connections per backend {report['backends']} do not add up to {requests}")
if report["arp_answered"] == 0: problems.append("no ARP request was answered")
for p in problems: print("  " + p)
sys.exit(1 if problems else 0)
PY
echo "PASS"
