#!/usr/bin/env bash
# The engine against every MPI library installed (issues 26, 36), 2 ranks on this machine:
#   scripts/compare_mpis.sh OUTDIR [more cb_<coll> options]
#   CB_SIZES=1K:4K CB_PASSES=6 scripts/compare_mpis.sh /tmp/smoke -i 5 -x 1  (a smoke run)
# For each MPI in CB_MPIS (default "mpich4 mpich5 openmpi5"; scripts/mpi_select.sh names
# them, scripts/install_mpi.sh installs the registry's), a Release build in
# build-release[-MPI]/ (Debian's MPICH: build-release/), then the series, each a separate
# short run (one process per library): every MPI's own collectives (mpi-MPI: --backend mpi,
# built against it), the engine (engine-MPI: --backend engine on its own buffers, and
# engine-plain-MPI: --alloc plain; built against CB_ENGINE_MPIS, default the first MPI: its
# shared-memory paths do not go through MPI) and the engine under an unmodified program
# (preload-MPI: cb_<coll> --backend mpi with LD_PRELOAD=libcb_engine_preload.so) on every
# MPI (CB_COMPARE_KINDS: which of these four kinds run, default all; mpi always). For each
# collective (CB_COLLS, default allreduce bcast alltoall allgather reduce_scatter), size
# range (a chunk: CB_CHUNKS, default "4:16K 32K:1M 2M:64M"; alltoall, per peer,
# CB_CHUNKS_ALLTOALL, default "4:16K 32K:1M 2M:16M"; CB_SIZES: one chunk) and
# pass (CB_PASSES, default 10: 6 at least for a 95 % interval, docs/statistics.md), one
# round runs every series once, in an order shuffled anew for every round (bash's RANDOM
# seeded with CB_SEED; by default a random seed, printed and recorded: CB_SEED=N repeats
# an order). Pass k of all series thus runs seconds apart: this VM's speed drifts over
# minutes (docs/methodology.md, "Comparing backends"), so compare_mpis.py compares each
# series with the fastest library pass by pass (docs/statistics.md's sign-test intervals
# and verdicts).
# Each run: -c, -i 200 (unless the options given set -i/-n/--iterations) and
# CB_ITERS_LARGE (default 20) iterations above 8 KiB: many short passes, about the old
# three long ones' time in all.
# Writes OUTDIR/<coll>.<series>.<pass>.c<chunk>.json (and .txt), copy_bw.json, info.json
# (cb_info: the floors), run.json
# (the git revision and whether the tree was dirty, the seed, passes, MPIs, chunks, dates,
# host name and cores, and every run: its round, its position in it, whether it failed),
# and with scripts/compare_mpis.py OUTDIR/comparison.md (per collective and size: each
# series' median and 95 % interval, the ratio to the fastest library with its interval
# and the verdict; the sizes where a series is slower or indistinguishable) and
# OUTDIR/plots/<coll>.png (matplotlib: every series with its interval, the copy bound).
# A run that fails is recorded and left out (its JSON removed); the exit status is then 1.
# Timings need a quiet machine. CB_COMPARE_REUSE=1: use the build folders the tests use
# (build/, build-$CB_MPI/) as they are configured, building only the benchmarks and the
# preload there (for a smoke run). CB_COMPARE_TARGETS: what to build (default
# "cb_benchmarks cb_engine_preload"; naming only cb_<coll> of CB_COLLS, cb_copybw, cb_info
# and cb_engine_preload saves most of the build). CB_COMPARE_DRY_RUN=1: no build and no run:
# prints each run's command line in the shuffled order and writes run.json (each run's
# status "dry run"; what tests/scripts/test_compare_mpis.py checks). Every library is
# launched as its users would (CB_MPIRUN_AS_USERS=1 in scripts/mpirun_compat.sh: Open
# MPI's default binding, hydra's -bind-to core when the ranks fit the cores).
# Across hosts (docs/cluster.md, "The engine against the libraries across a link"):
# CB_HOSTFILE=FILE and CB_PPN=N (ranks per host), as the main job takes them
# (scripts/launch.sh: hydra -f FILE -ppn N, Open MPI --hostfile FILE --map-by ppr:N:node),
# put every run's ranks on those hosts; CB_NP (default 2) is the ranks of every run, on one
# host as across hosts. With a hosts file, cb_info runs under the launcher (info.json lists
# the hosts; its floors are off: the memory floors of one machine do not bound a network),
# cb_copybw not at all, and run.json records the hosts, ranks per host and the line rate
# (CB_LINE_RATE_GBPS, from scripts/cluster.sh's env). Without CB_HOSTFILE nothing changes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/compare_mpis.sh OUTDIR [cb options]}
shift
extra=("$@")
mpis=${CB_MPIS:-mpich4 mpich5 openmpi5}
colls=${CB_COLLS:-allreduce bcast alltoall allgather reduce_scatter}
passes=${CB_PASSES:-10}
[[ $passes =~ ^[1-9][0-9]*$ ]] ||
  { echo "compare_mpis: CB_PASSES must be at least 1 (got '$passes')" >&2; exit 2; }
seed=${CB_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
[[ $seed =~ ^[0-9]+$ ]] ||
  { echo "compare_mpis: CB_SEED must be a number (got '$seed')" >&2; exit 2; }
iters_large=${CB_ITERS_LARGE:-20}
np=${CB_NP:-2}
[[ $np =~ ^[1-9][0-9]*$ ]] ||
  { echo "compare_mpis: CB_NP must be a whole number, at least 1 (got '$np')" >&2; exit 2; }
hostfile=${CB_HOSTFILE:-}
ppn=${CB_PPN:-}
if [ -n "$hostfile" ]; then
  [ -r "$hostfile" ] || { echo "compare_mpis: CB_HOSTFILE '$hostfile' cannot be read" >&2; exit 2; }
  hostfile=$(cd "$(dirname "$hostfile")" && pwd)/$(basename "$hostfile")
  [ -z "$ppn" ] || [[ $ppn =~ ^[1-9][0-9]*$ ]] ||
    { echo "compare_mpis: CB_PPN must be a whole number, at least 1 (got '$ppn')" >&2; exit 2; }
elif [ -n "$ppn" ]; then
  echo "compare_mpis: CB_PPN (ranks per host) needs CB_HOSTFILE (the hosts)" >&2
  exit 2
fi
engine_mpis=${CB_ENGINE_MPIS:-${mpis%% *}}
for k in ${CB_COMPARE_KINDS:-mpi}; do
  case $k in mpi | engine | engine-plain | preload) ;; *)
    echo "compare_mpis: CB_COMPARE_KINDS takes mpi, engine, engine-plain, preload (got '$k')" >&2
    exit 2 ;;
  esac
done
[[ " ${CB_COMPARE_KINDS:-mpi} " == *" mpi "* ]] ||
  { echo "compare_mpis: CB_COMPARE_KINDS must keep mpi (the libraries are the baseline)" >&2; exit 2; }
targets=${CB_COMPARE_TARGETS:-cb_benchmarks cb_engine_preload}
iters=(-i 200)  # many short passes: the options given win
for a in "${extra[@]}"; do
  case "$a" in -i | -n | --iterations | --iters | --iterations=* | --iters=* | -i[0-9]* | -n[0-9]*)
    iters=() ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && dirty=true
runs_tsv=$out/.runs.tsv
: >"$runs_tsv"
echo "== compare_mpis: seed $seed (CB_SEED=$seed repeats the order), $passes passes, revision" \
  "$revision$([ "$dirty" = true ] && echo ' (dirty tree)')"

dry=${CB_COMPARE_DRY_RUN:-0}
declare -A BUILD RUN REAL
for mpi in $mpis; do
  if [ "$dry" = 1 ]; then
    BUILD[$mpi]=build-$mpi REAL[$mpi]=mpirun RUN[$mpi]=$PWD/scripts/mpirun_compat.sh
    continue
  fi
  # shellcheck source=scripts/mpi_select.sh
  (source scripts/mpi_select.sh && CB_MPI=$mpi cb_mpi_select) >/dev/null || {
    echo "compare_mpis: cannot select $mpi" >&2
    exit 2
  }
  if [ "${CB_COMPARE_REUSE:-0}" = 1 ]; then
    build=$(source scripts/mpi_select.sh && CB_MPI=$mpi cb_mpi_build_dir build)
    [ -f "$build/CMakeCache.txt" ] || { echo "compare_mpis: no $build/ to reuse" >&2; exit 2; }
    echo "== compare_mpis: $mpi: reusing $build/"
    # shellcheck disable=SC2086
    cmake --build "$build" -j"$(nproc)" $(printf -- '--target %s ' $targets) >/dev/null
  else
    case "$mpi" in mpich4) build=build-release ;; *) build=build-release-$mpi ;; esac
    echo "== compare_mpis: building against $mpi in $build/"
    CB_MPI=$mpi CB_BUILD_TARGETS="$targets" bash scripts/build.sh "$build" \
      -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_BUILD_TESTS=OFF
  fi
  BUILD[$mpi]=$build
  # the launcher: scripts/mpirun_compat.sh in front of the MPI's own mpirun
  REAL[$mpi]=$(source scripts/mpi_select.sh && CB_MPI=$mpi cb_mpi_select >/dev/null &&
               echo "${CB_MPIRUN_REAL:-mpirun}")
  RUN[$mpi]=$PWD/scripts/mpirun_compat.sh
done
# launch MPI: sets LAUNCH to the arguments after the launcher (scripts/mpirun_compat.sh):
# `-n NP` on this machine; with CB_HOSTFILE scripts/launch.sh's hosts file and ranks per host
# for the MPI's own mpirun (its flavour from its name in a dry run, else from --version).
# shellcheck source=scripts/launch.sh
source scripts/launch.sh
launch() {
  LAUNCH=(-n "$np")
  [ -n "$hostfile" ] || return 0
  local flavour=
  if [ "$dry" = 1 ]; then
    case $1 in openmpi*) flavour=openmpi ;; *) flavour=hydra ;; esac
  fi
  # shellcheck disable=SC2086  # no PPN: the launcher places the ranks
  MPIRUN=${REAL[$1]} CB_MPIRUN_FLAVOUR=$flavour CB_HOSTFILE=$hostfile cb_launch_cmd "$np" $ppn ||
    { echo "compare_mpis: no launch across hosts for $1" >&2; exit 2; }
  LAUNCH=("${CB_LAUNCH[@]:1}")
}
first=${mpis%% *}
if [ -z "$hostfile" ]; then
  [ "$dry" = 1 ] || "${BUILD[$first]}/cb_copybw" -J "$out/copy_bw.json" > "$out/copy_bw.txt"
  # the floors (cache-line hand-off, copy rate per size) the tables and plots show per size
  [ "$dry" = 1 ] || "${BUILD[$first]}/cb_info" -J "$out/info.json" > "$out/info.txt"
elif [ "$dry" != 1 ]; then
  launch "$first"
  CB_MPIRUN_REAL="${REAL[$first]}" "${RUN[$first]}" "${LAUNCH[@]}" "${BUILD[$first]}/cb_info" \
    --floors off -J "$out/info.json" > "$out/info.txt" 2>&1 ||
    { echo "compare_mpis: cb_info across the hosts failed (see $out/info.txt)" >&2; exit 1; }
fi

write_run_json() {  # OUTDIR/run.json from the settings and $runs_tsv (complete: true/false)
  local builds=() m
  for m in $mpis; do builds+=("$m=${BUILD[$m]:-}"); done
  CB_J_COMPLETE=$1 CB_J_SEED=$seed CB_J_PASSES=$passes CB_J_MPIS=$mpis \
  CB_J_ENGINE_MPIS=$engine_mpis CB_J_COLLS=$colls CB_J_REVISION=$revision CB_J_DIRTY=$dirty \
  CB_J_STARTED=$started CB_J_ITERS="${iters[1]:-}" CB_J_ITERS_LARGE=$iters_large \
  CB_J_BUILDS="${builds[*]}" CB_J_NPROC=$(nproc) CB_J_HOST=$(hostname) \
  CB_J_REUSE=${CB_COMPARE_REUSE:-0} CB_J_SHELL="bash $BASH_VERSION" \
  CB_J_DRY=$dry CB_J_NP=$np CB_J_HOSTFILE=$hostfile CB_J_PPN=$ppn \
  CB_J_RATE=${CB_LINE_RATE_GBPS:-} \
  python3 - "$out" "$runs_tsv" "${extra[@]}" <<'PY'
import datetime, json, os, sys
out, tsv, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
e = os.environ
runs, chunks = [], {}
with open(tsv) as f:
    for line in f:
        coll, chunk, sizes, p, pos, n, series, name, start, status = line.rstrip("\n").split("\t")
        chunks.setdefault(coll, {})[int(chunk)] = sizes
        runs.append({"coll": coll, "chunk": int(chunk), "sizes": sizes, "pass": int(p),
                     "position": int(pos), "round_size": int(n), "series": series,
                     "file": name + ".json", "start": start, "status": status})
doc = {"schema": "collbench.compare_mpis/1", "script": "scripts/compare_mpis.sh",
       "complete": e["CB_J_COMPLETE"] == "true",
       "git": {"revision": e["CB_J_REVISION"], "dirty": e["CB_J_DIRTY"] == "true"},
       "seed": int(e["CB_J_SEED"]), "passes": int(e["CB_J_PASSES"]),
       "order": "shuffled per round (collective, chunk, pass); position 0 = first",
       "mpis": e["CB_J_MPIS"].split(), "engine_mpis": e["CB_J_ENGINE_MPIS"].split(),
       "collectives": e["CB_J_COLLS"].split(),
       "chunks": {c: [v[k] for k in sorted(v)] for c, v in chunks.items()},
       "options": {"iterations": int(e["CB_J_ITERS"]) if e["CB_J_ITERS"] else "as given",
                   "iterations_large": int(e["CB_J_ITERS_LARGE"]),
                   "extra": extra},
       "builds": dict(b.split("=", 1) for b in e["CB_J_BUILDS"].split()),
       "reuse_builds": e["CB_J_REUSE"] == "1", "dry_run": e["CB_J_DRY"] == "1",
       "start": e["CB_J_STARTED"],
       "end": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "machine": {"hostname": e["CB_J_HOST"], "nproc": int(e["CB_J_NPROC"])},
       "shell": e["CB_J_SHELL"], "ranks": int(e["CB_J_NP"]), "runs": runs}
if e["CB_J_HOSTFILE"]:  # across hosts: the hosts file's lines, ranks per host, line rate
    with open(e["CB_J_HOSTFILE"]) as f:
        hosts = [line.split()[0] for line in f if line.split() and not line.startswith("#")]
    doc["hosts"] = {"hostfile": e["CB_J_HOSTFILE"], "hosts": hosts,
                    "ranks_per_host": int(e["CB_J_PPN"]) if e["CB_J_PPN"] else None,
                    "line_rate_gbps": float(e["CB_J_RATE"]) if e["CB_J_RATE"] else None}
with open(os.path.join(out, "run.json"), "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
PY
}
complete=false
trap 'write_run_json $complete; rm -f "$runs_tsv"' EXIT

failed=0
run() {  # run MPI NAME PRELOAD(0/1) BENCH ARGS...
  local mpi=$1 name=$2 preload=$3 bench=$4 build
  shift 4
  build=${BUILD[$mpi]}
  local envs=()
  [ "$preload" = 1 ] && envs=(LD_PRELOAD="$PWD/$build/libcb_engine_preload.so")
  launch "$mpi"
  if [ -n "$hostfile" ]; then
    echo "== $name: ${LAUNCH[*]} cb_$bench $*"
  else
    echo "== $name: cb_$bench $*"
  fi
  [ "$dry" = 1 ] && return 0
  if ! env CB_MPIRUN_REAL="${REAL[$mpi]}" CB_MPIRUN_AS_USERS=1 "${envs[@]}" "${RUN[$mpi]}" \
      "${LAUNCH[@]}" "$build/cb_$bench" -J "$out/$name.json" "$@" > "$out/$name.txt" 2>&1; then
    echo "compare_mpis: $name failed (see $out/$name.txt)" >&2
    tail -5 "$out/$name.txt" >&2
    rm -f "$out/$name.json"
    return 1
  fi
}

chunks() {  # chunks COLL: the size ranges, each run by every series back to back
  if [ -n "${CB_SIZES:-}" ]; then
    echo "$CB_SIZES"
  elif [ "$1" = alltoall ]; then
    echo "${CB_CHUNKS_ALLTOALL:-4:16K 32K:1M 2M:16M}"
  else
    echo "${CB_CHUNKS:-4:16K 32K:1M 2M:64M}"
  fi
}

# The series of one round, "KIND MPI": each library's own, the engine's, the preload's
# (CB_COMPARE_KINDS, default all four kinds: mpi engine engine-plain preload).
kinds=" ${CB_COMPARE_KINDS:-mpi engine engine-plain preload} "
series=()
for mpi in $mpis; do series+=("mpi $mpi"); done
for mpi in $engine_mpis; do
  [[ $kinds == *" engine "* ]] && series+=("engine $mpi")
  [[ $kinds == *" engine-plain "* ]] && series+=("engine-plain $mpi")
done
if [[ $kinds == *" preload "* ]]; then
  for mpi in $mpis; do series+=("preload $mpi"); done
fi

RANDOM=$seed  # from here on, the same seed gives the same orders
for coll in $colls; do
  c=0
  for sizes in $(chunks "$coll"); do
    c=$((c + 1))
    args=(-m "$sizes" -c "${iters[@]}" --iterations-large "$iters_large" "${extra[@]}")
    for pass in $(seq 1 "$passes"); do
      order=("${series[@]}")
      for ((i = ${#order[@]} - 1; i > 0; i--)); do  # Fisher-Yates
        j=$((RANDOM % (i + 1)))
        t=${order[i]} order[i]=${order[j]} order[j]=$t
      done
      for ((pos = 0; pos < ${#order[@]}; pos++)); do
        read -r kind mpi <<<"${order[pos]}"
        name=$coll.$kind-$mpi.$pass.c$c
        start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        case $kind in
          mpi) opts=(0 "$coll" --backend mpi) ;;
          engine) opts=(0 "$coll" --backend engine) ;;
          engine-plain) opts=(0 "$coll" --backend engine --alloc plain) ;;
          preload) opts=(1 "$coll" --backend mpi) ;;
        esac
        status=ok
        [ "$dry" = 1 ] && status="dry run"
        run "$mpi" "$name" "${opts[@]}" "${args[@]}" || { status=failed; failed=$((failed + 1)); }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$coll" "$c" "$sizes" "$pass" "$pos" \
          "${#order[@]}" "$kind-$mpi" "$name" "$start" "$status" >>"$runs_tsv"
      done
    done
  done
done
complete=true
write_run_json true
[ "$dry" = 1 ] && exit 0
python3 scripts/compare_mpis.py "$out"
echo "compare_mpis: JSON, run.json, comparison.md and plots/ in $out (seed $seed)"
if [ "$failed" -gt 0 ]; then
  echo "compare_mpis: $failed runs failed (left out; see run.json)" >&2
  exit 1
fi
