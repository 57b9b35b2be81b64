#!/usr/bin/env bash
# End to end, the stateful LB under a SYN flood live on DPDK ports: hping3 sends SYNs from random
# (spoofed) sources to the VIP as fast as it can for 5 s while the client makes 100 legitimate
# connections (HTTP requests to three nginx backends); [lb] new_connection_rate = 20 a second, a token
# every 50 ms (the meter runs on the packets' clock, the worker's reads: on a loaded machine a worker
# not run for a while finds the bucket refilled by the gap, one token per 50 ms of it).
#
#   client 10.10.1.2 --- [port 0 10.10.1.1, VIP 10.10.1.100 | flowtrack | port 1 10.10.2.1] --- bridge
#   (and hping3's spoofed sources)                                    backends 10.10.2.11, .12, .13
#
# Checked: every legitimate request answered (their first packets above the rate go by the consistent
# choice without state, and their answers get the VIP back); the connections the tracker created at
# most 1 % above the legitimate ones (the flood keeps the meter empty: no spoofed SYN gets state); the
# flood that reached the VIP counted as over_rate (at least 95 % of it); every mbuf back at the end.
#
# Usage: lb_syn_flood.sh path/to/flowtrack. Exit 77: skipped.
set -uo pipefail
bin=${1:?usage: lb_syn_flood.sh path/to/flowtrack}
legitimate=100
source "$(dirname "$0")/live_lib.sh"
live_init nginx curl hping3

live_lb_network
for b in 1 2 3; do
  ip -n "$tag-b$b" route add default via 10.10.2.1
  live_nginx b$b b$b 10.10.2.1$b b$b
done

cat > "$work/lb.toml" << CONF
[lb]
policy = "round_robin"
new_connection_rate = 20
new_connection_burst = 1
[[service]]
name = "web"
vip = "10.10.1.100"
port = 80
$(for b in 1 2 3; do printf '  [[service.backend]]\n  name = "b%s"\n  address = "10.10.2.1%s"\n' $b $b; done)
[dataplane]
control_socket = "$work/ctl.sock"
$(live_lb_ports)
CONF
live_start_flowtrack nf lb "$work/lb.toml" f0 f1
# The client learns the VIP's MAC before the flood fills the link.
ip netns exec "$tag-client" curl -s --max-time 5 -o /dev/null http://10.10.1.100/ || live_fail "no answer before the flood"

ip netns exec "$tag-client" timeout 5 hping3 -q -S -p 80 --flood --rand-source 10.10.1.100 > /dev/null 2> "$work/hping3.err" &
flood=$!
sleep 0.5
# The legitimate connections, during the flood: one each, up to 5 s for each (a SYN lost in the flood's
# queues is sent again).
ok=0
for _ in $(seq "$legitimate"); do
  code=$(ip netns exec "$tag-client" curl -s --max-time 5 -o /dev/null -w '%{http_code}' http://10.10.1.100/)
  [[ $code == 200 ]] && ((ok++))
  sleep 0.03
done
wait "$flood"
counters=$("$bin" ctl --socket "$work/ctl.sock" counters) || live_fail "ctl counters was refused"
live_stop_flowtrack
sent=$(grep -o '[0-9]* packets transmitted' "$work/hping3.err" | grep -o '^[0-9]*')
python3 - "$counters" "$ok" "$legitimate" "${sent:-0}" << 'PY' || live_fail "the flood"
import json, sys
c, ok, legitimate, sent = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
problems = []
if ok != legitimate:
    problems.append(f"{legitimate - ok} of {legitimate} legitimate requests failed")
# The request before the flood and the legitimate ones: at most 1 % more tracked.
allowed = (legitimate + 1) * 101 // 100
if c["connections"] > allowed:
    problems.append(f"the tracker created {c['connections']} connections: more than {allowed}")
# What reached the function toward the VIP: the flood as far as the kernel's queues let it through (on
# a loaded machine the veth and the packet socket drop much of it before flowtrack reads it, so hping3's
# count is no measure), and the legitimate connections' packets, a few hundred.
to_vip = sum(v["packets"] for v in c["vips"].values())
flood_in = to_vip - min(to_vip, 20 * (legitimate + 1))
if flood_in < sent // 20:
    problems.append(f"only {to_vip} packets reached the VIP of {sent} spoofed SYNs sent: no flood to measure")
elif c["over_rate"] < flood_in * 95 // 100:
    problems.append(f"over_rate {c['over_rate']} of at least {flood_in} spoofed SYNs that reached the VIP")
print(f"  hping3 sent {sent} spoofed SYNs in 5 s, {to_vip} packets reached the VIP; {ok} of {legitimate} "
      f"legitimate requests answered; the tracker created {c['connections']} connections; "
      f"over_rate {c['over_rate']}; drops {c['drops']}")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
live_report_check 'r["mbufs_missing"] == 0'
echo "PASS"
