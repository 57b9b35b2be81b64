#!/usr/bin/env bash
# Runs every libFuzzer target in a build tree for a bounded time, each on a scratch copy of its seed
# corpus, as many at once as there are cores (each fuzzer is one process on one core). Fails if any
# fuzzer finds a crash, a leak or a sanitizer report.
set -euo pipefail
build_dir=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
shopt -s nullglob

# One fuzzer for its time; its log and its verdict in $build_dir/<name>.log and .status.
fuzz_one() {
  local name=$1 work
  work=$(mktemp -d)
  if [[ -d "$root/fuzz/corpus/$name" ]]; then
    cp -r "$root/fuzz/corpus/$name/." "$work/"
  fi
  if "$build_dir/fuzz/$name" -max_total_time="$seconds" -print_final_stats=0 \
       -artifact_prefix="$build_dir/$name-" "$work" > "$build_dir/$name.log" 2>&1; then
    echo ok > "$build_dir/$name.status"
  else
    echo failed > "$build_dir/$name.status"
  fi
  rm -rf "$work"
}

names=()
for source in "$root"/fuzz/*.cpp; do names+=("$(basename "$source" .cpp)"); done
running=0
for name in "${names[@]}"; do
  echo "fuzz: $name for ${seconds}s"
  fuzz_one "$name" &
  running=$((running + 1))
  if ((running == jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=0
for name in "${names[@]}"; do
  if [[ $(cat "$build_dir/$name.status") != ok ]]; then
    tail -n 60 "$build_dir/$name.log"
    echo "fuzz: $name FAILED (log: $build_dir/$name.log)"
    failed=1
  else
    grep -E "^#[0-9]+.*DONE" "$build_dir/$name.log" | tail -n 1 || true
  fi
done
((failed == 0)) || exit 1
echo "fuzz: ${#names[@]} fuzzers ran clean"
