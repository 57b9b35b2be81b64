#!/usr/bin/env bash
# The demo, on a generated campus-like trace (no download, no NIC): what is in the trace, the stateful
# load balancer run over it, the load balancer's tables and scalings ranked, and the ways of sharing a
# bare connection table between cores compared.
set -euo pipefail
flowtrack=${1:-build/flowtrack}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== 1. a campus-like trace: 20000 connections arriving over 5 s, replayed as 4 shifted windows"
"$flowtrack" trace gen --profile campus --flows 20000 --duration 5 --windows 4 --seed 1 -o "$work/campus.pcap"
echo
"$flowtrack" trace stats "$work/campus.pcap" --top 3
echo
echo "== 2. the stateful load balancer over it (examples/lb.toml: the trace's servers are the VIPs)"
"$flowtrack" run --nf lb --config "$root/examples/lb.toml" --in "$work/campus.pcap" --out "$work/balanced.pcap" --workers 2
echo
echo "== 3. the stateful load balancer and the NAT by connection table and scaling (one instance per core, or"
echo "      one shared under a spinlock), against the forwarder and the stateless LB; the LB's configurations ranked"
"$flowtrack" bench nf --quick
echo
echo "== 4. sharing one connection table between cores, or one table per core (Mpps, cycles per packet)"
"$flowtrack" bench scale --quick --no-software --strategies sharded,spinlock,rwlock,lockfree,concurrent
printf '\n== the lab: "make report" sweeps these benches with NPF (about 10 minutes) and writes every figure to docs/report/index.html\n'
