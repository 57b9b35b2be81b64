#!/usr/bin/env bash
# The demo: generate a campus-like trace (no download, no NIC) and show what is in it.
set -euo pipefail
flowtrack=${1:-build/flowtrack}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== generating a campus-like trace: 20000 connections arriving over 5 s, replayed as 4 shifted windows"
"$flowtrack" trace gen --profile campus --flows 20000 --duration 5 --windows 4 --seed 1 -o "$work/campus.pcap"
echo
"$flowtrack" trace stats "$work/campus.pcap" --top 5
