#!/usr/bin/env bash
# Instructions per packet of each network function's burst loop (runtime/burst_loop.hpp: parse, the
# function's stages, expiry), counted by callgrind: stable where TSC cycles on a shared machine are not.
# Runs `flowtrack bench nf` once per function and burst size under callgrind, counting only inside
# run_burst_loop (the trace generation, the replay rehearsal and the output are left out; one repetition,
# without the run that clocks the stages).
#
#   scripts/callgrind-nfs.sh [BUILD_DIR]     (default build; campus 5 000 connections x 2 windows)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-5s %6s %14s\n' nf burst instr/packet
for nf in fwd slb lb nat; do
  for burst in 1 32; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" '--toggle-collect=void flowtrack::run_burst_loop*' \
      "$build/flowtrack" bench nf --nfs "$nf" --tables cuckoo --scalings sharded --workers 1 --reps 1 --no-stages --burst "$burst" \
      --flows 5000 --windows 2 --json > "$out/json" 2> "$out/log" || { cat "$out/log" >&2; exit 1; }
    packets=$(sed -n 's/.*"packets":\([0-9]*\).*/\1/p' "$out/json" | head -1)
    total=$(sed -n 's/^summary: //p; s/^totals: //p' "$out/cg" | head -1)
    awk -v nf="$nf" -v b="$burst" -v i="$total" -v p="$packets" 'BEGIN { printf "%-5s %6s %14.1f\n", nf, b, i / p }'
  done
done
