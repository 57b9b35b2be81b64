#!/usr/bin/env bash
# Instructions per operation of every flow table, counted by callgrind: stable where TSC cycles on a
# shared machine are not. Builds an AVX2 tree (valgrind cannot run AVX-512 code) in build-callgrind,
# runs `flowtrack bench table` once under callgrind with the given options (default: 64K entries at
# load 0.9, all tables), and prints one line per timed loop: table, size, load, op/mode, instructions
# per op. The bench marks each timed loop with callgrind client requests (zero stats, dump).
#
#   scripts/callgrind-tables.sh [bench table options...]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-callgrind -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOWTRACK_MARCH=x86-64-v3 > /dev/null
ninja -C build-callgrind flowtrack_cli > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--sizes 65536 --loads 0.9)
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
  build-callgrind/flowtrack bench table --reps 1 "${args[@]}" > /dev/null 2> "$out/valgrind.log" || {
  cat "$out/valgrind.log" >&2
  exit 1
}
printf '%-18s %9s %5s %-14s %12s\n' table size load op/mode instr/op
for dump in "$out"/cg.out.*; do
  label=$(sed -n 's/^desc: Trigger: Client Request: //p' "$dump" | head -1)
  total=$(sed -n 's/^summary: //p; s/^totals: //p' "$dump" | head -1)
  [ -n "$label" ] && [ -n "$total" ] || continue
  # label: table=T size=S load=L dist=D cell=op/mode ops=N
  eval "$(echo "$label" | tr ' ' '\n' | grep '=' | sed 's/^\([a-z]*\)=/cg_\1=/')"
  awk -v t="$cg_table" -v s="$cg_size" -v l="$cg_load" -v c="$cg_cell" -v n="$cg_ops" -v i="$total" \
    'BEGIN { printf "%-18s %9s %5s %-14s %12.1f\n", t, s, l, c, i / n }'
done | sort -k1,1 -k4,4
