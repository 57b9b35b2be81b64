#!/bin/bash
# Concury against the Maglev-style table, two or more builds in alternating rounds: for each round and
# each binary in turn, `bench compact`'s paired ratio (the median of its own alternating passes) at
# every size. A/B comparisons of a lookup change on a shared machine: each round sees every binary at
# nearly the same moment. Prints one line per round, binary and size: round, binary, connections,
# ratio, Concury Mqps, Maglev-style Mqps.
#   scripts/concury-ab.sh ROUNDS SIZES BINARY...   e.g. scripts/concury-ab.sh 3 1024,1048576 /tmp/a /tmp/b
set -euo pipefail
rounds=$1 sizes=$2
shift 2
for round in $(seq "$rounds"); do
  for binary in "$@"; do
    "$binary" bench compact --structures concury,maglev-digest --sizes "$sizes" --reps 2 --json 2>/dev/null |
      grep '"bulk-paired"' |
      python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(sys.argv[1], sys.argv[2], r["keys"], round(r["ratio"], 3), round(r["concury_mqps"], 1), round(r["maglev_mqps"], 1))
' "$round" "$(basename "$binary")"
  done
done
