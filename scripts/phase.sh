#!/usr/bin/env bash
# phase.sh NAME COMMAND...: runs COMMAND, then appends "NAME SECONDS STATUS START" to the phase log
# ($FLOWTRACK_PHASE_LOG, default .phase-times; START in seconds since the epoch), so `make test` can end
# with where its time went. phase.sh --report prints the log as a table and the total: the wall clock
# the phases covered, so that two phases run side by side (`make test`'s sanitizer builds) count once.
# phase.sh --reset empties it.
set -uo pipefail
log=${FLOWTRACK_PHASE_LOG:-.phase-times}
case "${1:-}" in
  --reset) : > "$log"; exit 0 ;;
  --report)
    [[ -s $log ]] || exit 0
    echo "phase times (wall):"
    awk '{ printf "  %-28s %5d s  %s\n", $1, $2, $3 }' "$log"
    # The total: the union of the phases' intervals, in order of their starts.
    sort -n -k4 "$log" | awk '
      { start = $4; end = $4 + $2
        if (NR == 1 || start > covered_to) { total += end - start; covered_to = end }
        else if (end > covered_to) { total += end - covered_to; covered_to = end } }
      END { printf "  %-28s %5d s  (%d min %d s)\n", "total", total, total / 60, total % 60 }'
    exit 0 ;;
esac
name=$1
shift
start=$(date +%s)
"$@"
status=$?
echo "$name $(($(date +%s) - start)) $([[ $status -eq 0 ]] && echo ok || echo FAILED) $start" >> "$log"
exit $status
