#!/usr/bin/env bash
# collbench against OMB 7.4's own binaries (issue 36): cb_latency, cb_bw, cb_bibw,
# cb_allreduce, cb_bcast, cb_alltoall (--backend mpi) and osu_latency, osu_bw, osu_bibw,
# osu_allreduce, osu_bcast, osu_alltoall, both built against the same MPI, 2 ranks, launched
# alike, ROUNDS rounds; in each round every benchmark pair runs once, the two sides in an
# order drawn anew (CB_SEED). scripts/omb_compare.py then takes per size the per-round
# ratio collbench / OMB (time; for bw and bibw OMB's MB/s over collbench's, so that below 1
# always means collbench reports the faster figure), its median and 95 % interval
# (scripts/cbstats.py), and a verdict: "agree" where the interval lies within +-TOL % (default
# 5), "differ" where it lies outside, "undecided" where it straddles a bound.
#
#   scripts/omb_compare.sh --omb OMB_SRC [--bindir build] [--out DIR] [--rounds 10]
#                          [--benches "latency bw ..."] [--build-only]
#
# OMB_SRC is an unpacked OMB 7.4 source tree (the tarball from
# https://mvapich.cse.ohio-state.edu/benchmarks/, or the stock 7.4 import that opens the
# git history of github.com/johnpzh/osu-micro-benchmarks-7.4-ext, commit a6bb9d2, which is
# what results/ used: this machine reaches no download site but the package registries).
# It is configured with the MPI's mpicc (CC, default mpicc) into OMB_SRC and the six
# benchmarks built there (--build-only stops after that). Sizes: OMB's defaults (pt2pt 1 B
# to 4 MiB, the collectives 1 B to 1 MiB) and its default datatype, MPI_CHAR (collbench's
# collectives with -T char; their own default is float).
# Iterations and warmup: each side's defaults, which are the same (docs/methodology.md,
# "collbench and OMB, point by point"). Needs a quiet machine: the pairs are seconds apart,
# the ratios within a round cancel a drift of the machine that is slower than that.
set -euo pipefail
cd "$(dirname "$0")/.."
omb="" bindir=build out="" rounds=10 build_only=0
benches="latency bw bibw allreduce bcast alltoall"
while [ $# -gt 0 ]; do
  case "$1" in
    --omb) omb=$2; shift 2 ;;
    --bindir) bindir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --benches) benches=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    *) echo "omb_compare.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
[ -n "$omb" ] || { echo "omb_compare.sh: --omb OMB_SRC is required (an OMB 7.4 source tree)" >&2; exit 2; }
[ -f "$omb/configure" ] && [ -d "$omb/c/mpi/pt2pt/standard" ] ||
  { echo "omb_compare.sh: $omb is not an OMB source tree (no configure, c/mpi/pt2pt/standard)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "omb_compare.sh: --rounds must be at least 1" >&2; exit 2; }
version=$(sed -n 's/^AC_INIT(\[OSU-Micro-Benchmarks\], \[\([0-9.]*\)\].*/\1/p' "$omb/configure.ac")
[ "$version" = 7.4 ] || echo "omb_compare.sh: note: OMB version '$version', not 7.4" >&2

osu_dir() { case $1 in latency | bw | bibw) echo "$omb/c/mpi/pt2pt/standard" ;;
                       *) echo "$omb/c/mpi/collective/blocking" ;; esac; }
if [ ! -f "$omb/config.status" ]; then
  (cd "$omb" && ./configure CC="${CC:-mpicc}" CXX="${CXX:-mpicxx}" >config.cb.log 2>&1) ||
    { echo "omb_compare.sh: OMB's configure failed: $omb/config.cb.log" >&2; exit 1; }
fi
for b in $benches; do
  make -s -C "$(osu_dir "$b")" "osu_$b" >/dev/null ||
    { echo "omb_compare.sh: building osu_$b failed" >&2; exit 1; }
  [ -x "$bindir/cb_$b" ] || { echo "omb_compare.sh: $bindir/cb_$b is missing" >&2; exit 2; }
done
[ "$build_only" = 1 ] && exit 0

out=${out:-results/omb-compare-$(hostname)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
mpirun=${MPIRUN:-mpirun}
seed=${CB_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
RANDOM=$seed
sizes() { case $1 in latency | bw | bibw) echo "1:4194304" ;; *) echo "1:1048576" ;; esac; }
dtype() { case $1 in latency | bw | bibw) ;; *) echo "-T char" ;; esac; }
{
  echo "{\"omb_source\": \"$omb\", \"omb_version\": \"$version\", \"seed\": $seed,"
  echo " \"rounds\": $rounds, \"mpirun\": \"$(command -v "$mpirun")\","
  echo " \"git_revision\": \"$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src 2>/dev/null || echo -dirty)\","
  echo " \"start\": \"$(date -u +%FT%TZ)\"}"
} >"$out/run.json"
for r in $(seq 1 "$rounds"); do
  for b in $benches; do
    m=$(sizes "$b")
    # shellcheck disable=SC2046  # dtype's words are options
    cb=("$mpirun" -n 2 "$bindir/cb_$b" --backend mpi -m "$m" $(dtype "$b") -q
        -J "$out/cb_$b.$r.json")
    osu=("$mpirun" -n 2 "$(osu_dir "$b")/osu_$b" -m "$m")
    echo "== omb_compare: round $r of $rounds: $b" >&2
    if ((RANDOM % 2)); then
      "${cb[@]}" >/dev/null; "${osu[@]}" >"$out/osu_$b.$r.txt"
    else
      "${osu[@]}" >"$out/osu_$b.$r.txt"; "${cb[@]}" >/dev/null
    fi
  done
done
python3 scripts/omb_compare.py "$out"
