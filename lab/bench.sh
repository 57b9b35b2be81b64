#!/usr/bin/env bash
# Runs one `flowtrack bench` point for an NPF test file and prints its NPF result lines.
#
#   lab/bench.sh SUBCOMMAND [bench options...] -- NAME=FIELD [NAME=FIELD ...]
#
# The bench is $FLOWTRACK_BIN (default: build/flowtrack; a relative path is taken from the repository
# root), run with --json; its JSON lines go to stderr (NPF keeps them beside the run), and
# json2result.py turns them into RESULT lines. A failing bench or a missing field fails the run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
bin=${FLOWTRACK_BIN:-build/flowtrack}
[[ $bin == /* ]] || bin=$root/$bin
if [[ ! -x $bin ]]; then
  echo "lab error: no flowtrack binary at $bin (run 'make build', or set FLOWTRACK_BIN)" >&2
  exit 2
fi

bench_args=()
while (($#)) && [[ $1 != -- ]]; do
  bench_args+=("$1")
  shift
done
if (($# == 0)); then
  echo "lab error: bench.sh: no '-- NAME=FIELD ...' result specs after the bench options" >&2
  exit 2
fi
shift

if ! out=$("$bin" bench "${bench_args[@]}" --json); then
  echo "lab error: 'flowtrack bench ${bench_args[*]} --json' failed" >&2
  exit 2
fi
printf '%s\n' "$out" >&2
printf '%s\n' "$out" | python3 "$here/json2result.py" "$@"
