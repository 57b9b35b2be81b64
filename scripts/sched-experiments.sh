#!/usr/bin/env bash
# Runs every `flowtrack sim sched` / `sim afd` experiment of docs/performance/scheduling.md and writes
# each command's JSON lines (its context record, then one object per run) into OUT/<experiment>.jsonl;
# scripts/plot-sched.py OUT turns them into CSV and plots.
# Usage: scripts/sched-experiments.sh [path/to/flowtrack] [output dir]
set -euo pipefail
FLOWTRACK=${1:-build/flowtrack}
OUT=${2:-sched-out}
DURATION=${DURATION:-2}
mkdir -p "$OUT"

# Fig. 11: the paper's scenarios T1..T8 (set 1 underload, set 2 overload; Zipf for CAIDA, campus for
# Auckland), every policy, plus Ideal (LAPS without penalties).
: > "$OUT/scenarios.jsonl"
for t in T1 T2 T3 T4 T5 T6 T7 T8; do
  "$FLOWTRACK" sim sched --scenario "$t" --policy laps,afs,fcfs,rss,ideal --duration-s "$DURATION" --json >> "$OUT/scenarios.jsonl"
done

# The same with the literal reading of "migrate to the least loaded core" (LAPS and AFS only).
: > "$OUT/scenarios-any-lighter.jsonl"
for t in T1 T2 T3 T4 T5 T6 T7 T8; do
  "$FLOWTRACK" sim sched --scenario "$t" --policy laps,afs --migrate-to-any-lighter --duration-s "$DURATION" --json \
    >> "$OUT/scenarios-any-lighter.jsonl"
done

# LAPS with every packet feeding its detector (the default samples one in ten).
: > "$OUT/scenarios-unsampled.jsonl"
for t in T1 T2 T3 T4 T5 T6 T7 T8; do
  "$FLOWTRACK" sim sched --scenario "$t" --policy laps --sampling 1 --duration-s "$DURATION" --json >> "$OUT/scenarios-unsampled.jsonl"
done

# Fig. 15: distinct and aggressive flows on the core a flow leaves, at every LAPS migration.
: > "$OUT/census.jsonl"
for t in T1 T3 T5 T7; do
  "$FLOWTRACK" sim sched --scenario "$t" --policy laps --duration-s "$DURATION" --migration-census --json >> "$OUT/census.jsonl"
done

# Fig. 12: output rate against offered rate, split equally among the four services, Zipf headers.
"$FLOWTRACK" sim sched --policy ideal,laps,afs,fcfs,rss --offered 0.5,1,1.1,1.2,1.3,1.4,1.5,2,2.5,2.6,2.8,3,3.2,3.5,4,4.5,5,6,7,8 \
  --duration-s 1 --json > "$OUT/throughput.jsonl"

# Fig. 13: detector false positives against annex size and sampling, on both trace kinds.
: > "$OUT/afd-accuracy.jsonl"
for trace in zipf campus; do
  "$FLOWTRACK" sim afd --trace "$trace" --annex 0,64,128,256,512,1024,2048 --sampling 1 --json >> "$OUT/afd-accuracy.jsonl"
  "$FLOWTRACK" sim afd --trace "$trace" --annex 512 --sampling 1,0.1,0.01,0.001,0.0001 --json >> "$OUT/afd-accuracy.jsonl"
done

# Fig. 13b: accuracy checked every window of packets against that window's heaviest flows.
: > "$OUT/afd-windows.jsonl"
for trace in zipf campus; do
  "$FLOWTRACK" sim afd --trace "$trace" --annex 512 --sampling 1,0.1 --window 1000,2000,5000,10000,20000,50000,100000 --json \
    >> "$OUT/afd-windows.jsonl"
done

# Fig. 14: cores per service against time, 20 ms steps, under both rate sets.
for rates in underload overload; do
  "$FLOWTRACK" sim sched --rates "$rates" --policy laps --duration-s 5 --timeline-ms 20 --json > "$OUT/timeline-$rates.jsonl"
done

# Simulator speed: median of 5 repetitions, one core; LAPS also with every packet sampled.
"$FLOWTRACK" sim sched --scenario T5 --policy laps,afs,fcfs,rss --duration-s 2 --reps 5 --json > "$OUT/speed.jsonl"
"$FLOWTRACK" sim sched --scenario T5 --policy laps --sampling 1 --duration-s 2 --reps 5 --json >> "$OUT/speed.jsonl"
