#!/usr/bin/env bash
# phase.sh NAME COMMAND...: runs COMMAND, then appends "NAME SECONDS STATUS" to the phase log
# ($FLOWTRACK_PHASE_LOG, default .phase-times), so `make test` can end with where its time went.
# phase.sh --report prints the log as a table and the total; phase.sh --reset empties it.
set -uo pipefail
log=${FLOWTRACK_PHASE_LOG:-.phase-times}
case "${1:-}" in
  --reset) : > "$log"; exit 0 ;;
  --report)
    [[ -s $log ]] || exit 0
    echo "phase times (wall):"
    awk '{ printf "  %-28s %5d s  %s\n", $1, $2, $3; total += $2 }
         END { printf "  %-28s %5d s  (%d min %d s)\n", "total", total, total / 60, total % 60 }' "$log"
    exit 0 ;;
esac
name=$1
shift
start=$(date +%s)
"$@"
status=$?
echo "$name $(($(date +%s) - start)) $([[ $status -eq 0 ]] && echo ok || echo FAILED)" >> "$log"
exit $status
