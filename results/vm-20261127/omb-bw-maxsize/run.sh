#!/usr/bin/env bash
# Issue 36's one OMB difference left: cb_bw reads 10-25 % more bandwidth than OMB 7.4's
# osu_bw at 4-8 KiB in scripts/omb_compare.sh's runs (sweeps to 4 MiB). Is it the launch
# (address layout), the tools' timing, or the run's largest size? Per round, in an order
# drawn anew (seed below), each variant is one launch, both ranks bound (-bind-to core):
#   osu-8K / cb-8K     -m 4096:8192        (buffers of 8 KiB)
#   osu-4M / cb-4M     -m 4096:4194304     (buffers of 4 MiB, as in omb_compare.sh)
#   osu-4M-noaslr / cb-4M-noaslr           the same under setarch -R (no address randomization)
# The launches' output is packed in raw.tar.xz. Then summarize.py: per variant and size the
# median and 95 % interval over the launches (summary.json, summary.md). BENCH=bibw runs
# osu_bibw and cb_bibw the same way, without the setarch variants (raw-bibw.tar.xz,
# summary-bibw.json, summary-bibw.md).
#   flock -x /tmp/cb_quiet.lock [BENCH=bibw] results/vm-20261127/omb-bw-maxsize/run.sh [ROUNDS (12)]
# OMB as scripts/omb_compare.sh builds it (OMB_SRC, default /tmp/omb/src).
# omb-compare-bw-bibw.tar.xz: scripts/omb_compare.sh --benches "bw bibw" --rounds 10 the same
# hour (seed 1127), whose omb_compare.md still finds osu_bw 4 KiB below cb_bw (sweeps to 4 MiB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
bench=${BENCH:-bw}
case $bench in bw) tag="" ;; bibw) tag=-bibw ;; *) echo "run.sh: BENCH is bw or bibw" >&2; exit 2 ;; esac
osu=${OMB_SRC:-/tmp/omb/src}/c/mpi/pt2pt/standard/osu_$bench
rounds=${1:-12}
seed=${CB_SEED:-1127}
RANDOM=$seed
raw=$here/raw$tag
rm -rf "$raw"; mkdir -p "$raw"
variants=(osu-8K cb-8K osu-4M cb-4M)
[ "$bench" = bw ] && variants+=(osu-4M-noaslr cb-4M-noaslr)
echo "{\"bench\": \"$bench\", \"seed\": $seed, \"rounds\": $rounds, \"git_revision\": \"$(git rev-parse --short=12 HEAD)\", \"start\": \"$(date -u +%FT%TZ)\", \"mpirun\": \"mpirun -bind-to core -n 2\"}" >"$here/run$tag.json"
for r in $(seq 1 "$rounds"); do
  order=("${variants[@]}")
  for ((i = ${#order[@]} - 1; i > 0; i--)); do  # Fisher-Yates with bash's seeded RANDOM
    j=$((RANDOM % (i + 1))); t=${order[i]}; order[i]=${order[j]}; order[j]=$t
  done
  for v in "${order[@]}"; do
    case $v in *-8K) m=4096:8192 ;; *) m=4096:4194304 ;; esac
    pre=(); case $v in *-noaslr) pre=(setarch -R) ;; esac
    case $v in osu*) cmd=("$osu" -m "$m") ;; cb*) cmd=(build/cb_$bench --backend mpi -q -m "$m") ;; esac
    mpirun -bind-to core -n 2 "${pre[@]}" "${cmd[@]}" >"$raw/$v.$r.txt"
  done
done
tar -cJf "$here/raw$tag.tar.xz" -C "$here" "raw$tag" && rm -rf "$raw"
python3 "$here/summarize.py" "$here" "$tag"
