#!/usr/bin/env bash
# Plots and a comparison summary for a results directory (as scripts/sweep.sh writes it):
#   scripts/plots.sh RESULTS_DIR [BASELINE_BACKEND]
# RESULTS_DIR/plots/<benchmark>.<figure>.{png,svg}   plot.py --per-benchmark
# RESULTS_DIR/plots/<benchmark>.algos.<figure>.*      each --algo all sweep, per algorithm
# RESULTS_DIR/plots/side-by-side.<benchmark>.*       the backends alone, without variants
# RESULTS_DIR/summary.md                             compare.py --summary: one page, per
#                                                    benchmark the comparison by size band
# RESULTS_DIR/comparisons.md, summary.json           compare.py --baseline-backend (mpi): every
#                                                    size of every comparison (the detail)
# RESULTS_DIR/replay.md, plots/replay.steps.*         replay_table.py (in summary.md when short)
# Files that are not usable results (aborted runs with no sizes) are skipped with a warning.
set -euo pipefail
dir=${1:?usage: scripts/plots.sh RESULTS_DIR [BASELINE_BACKEND]}
baseline=${2:-mpi}
here=$(cd "$(dirname "$0")" && pwd)
# Debian's python3-matplotlib serves /usr/bin/python3 (plot.py also retries with it).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

mapfile -t files < <(grep -l '"schema": *"collbench.result/1"' "$dir"/*.json 2>/dev/null || true)
if [ ${#files[@]} -eq 0 ]; then
  echo "plots.sh: no collbench result JSON in $dir" >&2
  exit 2
fi
# Replay runs get their own table and figure (replay_table.py); the rest go per benchmark.
mapfile -t replays < <(grep -l '"name": *"replay"' "${files[@]}" || true)
mapfile -t others < <(grep -L '"name": *"replay"' "${files[@]}" || true)
# cb_info's floors (info.json of a cb_info with --floors): the latency floor line
floors=()
grep -q '"handoff"' "$dir/info.json" 2>/dev/null && floors=(--info "$dir/info.json")
status=0
mkdir -p "$dir/plots"
if [ ${#others[@]} -gt 0 ]; then
  "$py" "$here/plot.py" --per-benchmark --skip-invalid "${floors[@]}" -o "$dir/plots" \
    "${others[@]}" >/dev/null ||
    status=$?
  "$py" "$here/compare.py" --baseline-backend "$baseline" --metric latency,busbw,bandwidth \
    --skip-invalid --summary "$dir/summary.md" --md "$dir/comparisons.md" \
    --json "$dir/summary.json" "${others[@]}" || status=$?
fi
# Backends alone (no engine variants), one figure set per benchmark, for files named as
# sweep.sh names them (<bench>.<backend>.<memory>.json); with the copy bound (copy_bw.json,
# which the per-benchmark plots above take from the file list).
copy=()
[ -f "$dir/copy_bw.json" ] && copy=(--copy-bw "$dir/copy_bw.json")
for b in latency bw bibw mbw_mr allreduce bcast alltoall allgather reduce_scatter; do
  mapfile -t main < <(ls "$dir/$b".{mpi,engine,nccl}.*.json 2>/dev/null || true)
  if [ ${#main[@]} -gt 1 ]; then
    "$py" "$here/plot.py" --skip-invalid "${copy[@]}" "${floors[@]}" --prefix "side-by-side.$b." \
      -o "$dir/plots" "${main[@]}" >/dev/null || status=$?
  fi
done
if [ ${#replays[@]} -gt 0 ]; then
  "$py" "$here/replay_table.py" --baseline "$baseline" --skip-invalid --md "$dir/replay.md" \
    --plot "$dir/plots/replay.steps" "${replays[@]}" || status=$?
  if [ -f "$dir/replay.md" ]; then
    printf '\n## Gradient replay (cb_replay), step times\n\n' >> "$dir/summary.md"
    # the table itself while it stays short (the main job's one replay), else the link
    if [ "$(grep -c '^| ' "$dir/replay.md")" -le 14 ]; then
      cat "$dir/replay.md" >> "$dir/summary.md"
    fi
    printf '\nEvery replay: [replay.md](replay.md), %s.\n' \
      "[plots/replay.steps.svg](plots/replay.steps.svg)" >> "$dir/summary.md"
  fi
fi
echo "plots.sh: plots in $dir/plots, summary in $dir/summary.md"
exit $status
