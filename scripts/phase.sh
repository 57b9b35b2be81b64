#!/usr/bin/env bash
# phase.sh NAME COMMAND...: runs COMMAND, then appends "NAME SECONDS STATUS START CPU" to the phase log
# ($FLOWTRACK_PHASE_LOG, default .phase-times; START in seconds since the epoch; CPU the user + system
# seconds of COMMAND and every process under it that was waited for), so `make test` can end with where
# its time went. The CPU column is what the phase cost whatever else the machine was running (wall
# seconds stretch when other work shares the cores; CPU seconds barely do). phase.sh --report prints the
# log as a table and the totals: the wall clock the phases covered, so that phases run side by side
# (`make test`'s sanitizer builds beside the release tree's tests) count once, and the CPU seconds
# summed. phase.sh --reset empties it.
set -uo pipefail
log=${FLOWTRACK_PHASE_LOG:-.phase-times}
case "${1:-}" in
  --reset) : > "$log"; exit 0 ;;
  --report)
    [[ -s $log ]] || exit 0
    echo "phase times (wall, CPU = user + system):"
    awk '{ printf "  %-28s %5d s  %6d CPU-s  %s\n", $1, $2, $5, $3 }' "$log"
    # The wall total: the union of the phases' intervals, in order of their starts.
    sort -n -k4 "$log" | awk '
      { start = $4; end = $4 + $2; cpu += $5
        if (NR == 1 || start > covered_to) { total += end - start; covered_to = end }
        else if (end > covered_to) { total += end - covered_to; covered_to = end } }
      END { printf "  %-28s %5d s  %6d CPU-s  (%d min %d s)\n", "total", total, cpu, total / 60, total % 60 }'
    exit 0 ;;
esac
name=$1
shift
start=$(date +%s)
"$@"
status=$?
# `times` prints the shell's own user and system time, then its children's: COMMAND's, as "XmY.YYYs". It
# runs in this shell (a pipe or $(...) would run it in a new process, whose children are none).
times_file=$(mktemp)
times > "$times_file"
cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$times_file")
rm -f "$times_file"
echo "$name $(($(date +%s) - start)) $([[ $status -eq 0 ]] && echo ok || echo FAILED) $start $cpu" >> "$log"
exit $status
