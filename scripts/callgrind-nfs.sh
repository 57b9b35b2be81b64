#!/usr/bin/env bash
# Instructions per packet of each network function's burst loop (runtime/burst_loop.hpp: parse, the
# function's stages, expiry), counted by callgrind: stable where TSC cycles on a shared machine are not.
# Runs `flowtrack bench nf` once per function and burst size under callgrind, counting only inside
# run_burst_loop (the trace generation, the replay rehearsal and the output are left out; one repetition,
# without the run that clocks the stages).
#
#   scripts/callgrind-nfs.sh [BUILD_DIR]
#       campus 5 000 connections x 2 windows; one line per function and burst size.
#   [LL_BYTES=N] [NFS="lb nat"] scripts/callgrind-nfs.sh --cache CONNECTIONS [BUILD_DIR]
#       with callgrind's cache simulation (this machine's L1; a last level of LL_BYTES, by default its
#       32 MiB L3: a smaller one stands for a larger trace) on a trace holding CONNECTIONS connections at
#       once (bench nf --connections), for the functions NFS (lb and nat unless told) at bursts of 32:
#       per function of the loop
#       (inclusive), instructions and the cache lines it missed in L1 and in the last level (the DRAM
#       accesses a burst has to overlap), per packet. FORWARDS="nat ipip gue" profiles the LB once per
#       forwarding mode (bench nf --forwards; nat-clients: NAT mode on the packets a tunnel mode handles),
#       NAT mode alone unless told.
# valgrind 3.19 stops at the first AVX-512 instruction: on a CPU that has them, give a BUILD_DIR configured
# for x86-64-v3 (AVX2), CMakeLists.txt's default (the Makefile's build/ is -march=native), e.g. `cmake -S .
# -B build-cg -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-cg flowtrack`.
set -euo pipefail
cd "$(dirname "$0")/.."
connections=0
if [[ ${1:-} == --cache ]]; then
  connections=$2
  shift 2
fi
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# profile NF BURST [VALGRIND_OPTION...]: runs bench nf under callgrind into $out/cg, prints its packets.
profile() {
  local nf=$1 burst=$2 forward=$3 trace=(--flows 5000 --windows 2)
  shift 3
  ((connections > 0)) && trace=(--connections "$connections")
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" '--toggle-collect=void flowtrack::run_burst_loop*' "$@" \
    "$build/flowtrack" bench nf --nfs "$nf" --tables cuckoo --scalings sharded --workers 1 --reps 1 --no-stages --burst "$burst" \
    --forwards "$forward" "${trace[@]}" --json > "$out/json" 2> "$out/log" || { cat "$out/log" >&2; exit 1; }
  sed -n 's/.*"packets_handled":\([0-9]*\).*/\1/p' "$out/json" | head -1
}

if ((connections == 0)); then
  printf '%-5s %6s %14s\n' nf burst instr/packet
  for nf in fwd slb lb nat; do
    for burst in 1 32; do
      packets=$(profile "$nf" "$burst" nat)
      total=$(sed -n 's/^summary: //p; s/^totals: //p' "$out/cg" | head -1)
      awk -v nf="$nf" -v b="$burst" -v i="$total" -v p="$packets" 'BEGIN { printf "%-5s %6s %14.1f\n", nf, b, i / p }'
    done
  done
  exit 0
fi

for nf in ${NFS:-lb nat}; do
  for forward in ${FORWARDS:-nat}; do
    [[ $nf == lb || $forward == nat ]] || continue
    packets=$(profile "$nf" 32 "$forward" --cache-sim=yes "--LL=${LL_BYTES:-33554432},16,64")
    echo "== $nf ($forward), bursts of 32, $connections connections, last level ${LL_BYTES:-33554432} bytes, $packets packets handled (per packet handled: a tunnel mode's are the clients' alone, as nat-clients' are; inclusive; L1 and last-level misses, reads + writes)"
    printf '%12s %10s %10s  %s\n' instr L1-lines LL-lines function
    # Columns of callgrind_annotate: Ir D1mr D1mw DLmr DLmw, then the function; the loop's own callees
    # above 1 % of the instructions, with template arguments shortened.
    callgrind_annotate --inclusive=yes --threshold=99 --show=Ir,D1mr,D1mw,DLmr,DLmw "$out/cg" 2> /dev/null |
      awk -v p="$packets" '
        /^-+$/ { section++ }
        section >= 4 && /^ *[0-9,]+ \(/ {
          n = 0
          for (i = 1; i <= NF && n < 5; i++) if ($i ~ /^[0-9,.]+$/) { gsub(",", "", $i); v[n++] = $i }
          name = $0; sub(/^( *([0-9,]+ +(\( *[0-9.]+%\))?|\.))+ +/, "", name); sub(/ \[.*$/, "", name); sub(/^[^:]*:/, "", name)
          gsub(/\(anonymous namespace\)::|flowtrack::|absl::[a-z0-9]+::container_internal::/, "", name); gsub(/<[^<>]*>/, "", name); gsub(/<[^<>]*>/, "", name); gsub(/<[^<>]*>/, "", name)
          sub(/\(.*$/, "", name)
          if (v[0] / p < 1 || name ~ /clone|start_thread|_State_impl|0x0|run_worker|PROGRAM/) next
          printf "%12.1f %10.2f %10.2f  %s\n", v[0] / p, (v[1] + v[2]) / p, (v[3] + v[4]) / p, name
        }'
  done
done
