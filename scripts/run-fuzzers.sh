#!/usr/bin/env bash
# Runs every libFuzzer target in a build tree for a bounded time, each on a scratch copy of its seed
# corpus. Fails if any fuzzer finds a crash, a leak or a sanitizer report.
set -euo pipefail
build_dir=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
count=0
for source in "$root"/fuzz/*.cpp; do
  name=$(basename "$source" .cpp)
  work=$(mktemp -d)
  if [[ -d "$root/fuzz/corpus/$name" ]]; then
    cp -r "$root/fuzz/corpus/$name/." "$work/"
  fi
  echo "fuzz: $name for ${seconds}s"
  "$build_dir/fuzz/$name" -max_total_time="$seconds" -print_final_stats=0 \
    -artifact_prefix="$build_dir/$name-" "$work" > "$build_dir/$name.log" 2>&1 || {
      tail -n 60 "$build_dir/$name.log"
      echo "fuzz: $name FAILED (log: $build_dir/$name.log)"
      rm -rf "$work"
      exit 1
    }
  grep -E "^#[0-9]+.*DONE" "$build_dir/$name.log" | tail -n 1 || true
  rm -rf "$work"
  count=$((count + 1))
done
echo "fuzz: $count fuzzers ran clean"
