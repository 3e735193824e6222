#!/usr/bin/env bash
# The main job's sweep: by default the headline comparisons, with --full every benchmark on
# every backend this machine can run, side by side.
#   scripts/sweep.sh BUILD_DIR OUTDIR [--full] [--quick] [--list]
# Writes OUTDIR/<bench>.<backend>[-variant].host.{json,txt}, info.json (cb_info),
# copy_bw.json (the memory-copy bound), then plots and summary.md (scripts/plots.sh).
# Default (headline): cb_latency and cb_bw (mpi, engine), cb_allreduce and cb_bcast (mpi and
# engine interleaved in one run, 10 passes: per-size intervals and verdicts,
# docs/statistics.md), cb_ialltoall's overlap (-t 10), one cb_replay (ResNet-50, DDP
# buckets, emulated backward), NCCL beside them where a GPU is usable; sizes 4 B to 4 MiB.
# --full: every benchmark (docs/benchmarks.md), its variants and the DL replays.
# --quick: small sizes and few iterations, to check the whole pipeline fast (either set).
# --list: print the steps (after cb_info, which decides the backends) and stop.
# Every size is measured in CB_REPEAT passes (default 3; --repeat): the JSON keeps each
# pass's time, and comparisons.md marks sizes where two backends' passes overlap (~).
# Before each benchmark run it prints which step of how many it is and an estimate of the
# time left (the time per step so far); with stderr on a terminal, the benchmarks also draw
# their progress line there (--progress: through mpirun their stderr is a pipe).
#
# Launching (scripts/launch.sh builds every command line; docs/cluster.md, "On a cluster"):
#   CB_LAUNCHER=auto|mpirun|srun  auto: srun inside a Slurm allocation, else mpirun (MPIRUN)
#   CB_HOSTFILE=FILE, CB_PPN=N    mpirun's hosts and ranks per node (hydra -f/-ppn, Open MPI
#                                 --hostfile/--map-by ppr:N:node); srun --ntasks-per-node N
#   CB_NP=N                       ranks of the collective, cb_mbw_mr and cb_replay runs (2)
#   CB_PAIR_PPN=N                 ranks per node of the two-rank cb_latency, cb_bw and cb_bibw
#                                 runs: 1 on a cluster (srun or CB_HOSTFILE), so that the pair
#                                 crosses the network; the launcher's placement elsewhere
# With none of them set: `mpirun -n 2` on this machine, as before.
set -euo pipefail
build=$1
out=$2
quick="" full="" list=""
for arg in "${@:3}"; do
  case "$arg" in
    --quick) quick=--quick ;;
    --full) full=1 ;;
    --list) list=1 ;;
    *) echo "sweep.sh: unknown option '$arg' (--full, --quick, --list)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/launch.sh
source "$here/launch.sh"
np=${CB_NP:-2}
launcher=$(cb_launcher) || exit 2
cluster=""
if [ "$launcher" = srun ] || [ -n "${CB_HOSTFILE:-}" ]; then cluster=1; fi
pair_ppn=${CB_PAIR_PPN:-${cluster:+1}}
# Refuse a bad layout before anything runs (cb_launch_cmd says why).
_cb_positive CB_NP "$np" || exit 2
if [ -n "${CB_PAIR_PPN:-}" ]; then _cb_positive CB_PAIR_PPN "$CB_PAIR_PPN" || exit 2; fi
cb_launch_cmd "$np" >/dev/null || exit 2
collective_cmd=("${CB_LAUNCH[@]}")
cb_launch_cmd 2 "$pair_ppn" >/dev/null || exit 2
echo "sweep: launcher: $(cb_launch_describe); $np ranks: ${collective_cmd[*]};" \
  "point-to-point pairs: ${CB_LAUNCH[*]}"

small=()
[ "$quick" = "--quick" ] && small=(-m 4:64K -i 20 -x 2)
repeat=(--repeat "${CB_REPEAT:-3}")
# interleaved series (--backend mpi,engine): 10 passes, or CB_REPEAT if more (6 at least give
# an interval, 10 one within the extremes: docs/statistics.md)
series_repeat=$((${CB_REPEAT:-3} > 10 ? ${CB_REPEAT:-3} : 10))
progress=()
[ -t 2 ] && progress=(--progress)  # the benchmarks' progress line, to this terminal

# Steps: the benchmark runs below are gone through twice, first only counted (counting=1),
# then run, each after a line saying which step of how many it is and the time left.
counting=1 step=0 steps=0 started=0
hms() {  # hms SECONDS: 42s, 3m05s, 1h02m
  local s=$1
  if [ "$s" -lt 60 ]; then printf '%ds' "$s"
  elif [ "$s" -lt 3600 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60))
  else printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60)); fi
}
next_step() {  # next_step WHAT: counts a step; false while counting, so that it is not run
  step=$((step + 1))
  if [ "$counting" = 1 ]; then
    [ -n "$list" ] && echo "$step: $*"
    return 1
  fi
  local elapsed=$(($(date +%s) - started)) left=""
  # the time per step so far, times the steps left (this one included)
  [ "$step" -gt 1 ] && left=", about $(hms $((elapsed * (steps - step + 1) / (step - 1)))) left"
  echo "== sweep: step $step of $steps, $(hms "$elapsed") elapsed$left: $*"
}

run() {  # run NP BENCH BACKEND TAG [args...]; NP "pair": the two-rank pt2pt layout
  local np=$1 bench=$2 backend=$3 tag=$4
  shift 4
  next_step "cb_$bench --backend $backend $*" || return 0
  local name="$bench.$tag.host" sizes=("${small[@]}")
  # barrier has no message size (-m is refused): --quick keeps only its iterations
  case "$bench" in
    barrier | ibarrier | barrier_persistent) if [ ${#sizes[@]} -gt 0 ]; then sizes=(-i 20 -x 2); fi ;;
  esac
  # fop and cas move one 8-byte element (one row, as OMB): no -m either
  case "$bench" in
    fop_latency | cas_latency) if [ ${#sizes[@]} -gt 0 ]; then sizes=(-i 20 -x 2); fi ;;
  esac
  # MPICH 4.0.2's partitioned and accumulate paths take milliseconds per message above
  # 256 KiB (partitioned_latency 4 MiB: 5.6 ms, get_acc_latency: 16 ms, against
  # cb_latency's 0.4 ms), 2-3 minutes a step at OMB's 1000 iterations: the main job stops
  # them at 256 KiB (the full range: run the benchmark by hand).
  case "$bench" in
    partitioned_latency | acc_latency | get_acc_latency)
      if [ ${#sizes[@]} -eq 0 ]; then sizes=(-m 256K); fi ;;
  esac
  local reps=("${repeat[@]}")
  case "$backend" in *,*) reps=(--repeat "$series_repeat") ;; esac  # interleaved series
  if [ "$np" = pair ]; then cb_launch_cmd 2 "$pair_ppn"; else cb_launch_cmd "$np"; fi
  if ! "${CB_LAUNCH[@]}" "$build/cb_$bench" --backend "$backend" -J "$out/$name.json" \
      "${reps[@]}" "${sizes[@]}" "${progress[@]}" "$@" | tee "$out/$name.txt"; then
    echo "sweep: cb_$bench --backend $backend $* failed (see above); continuing" >&2
  fi
}

# On a cluster cb_info runs on every node of the collective layout (hosts, RDMA ports,
# the launcher as the ranks see it); here as one process.
if [ -n "$cluster" ]; then
  "${collective_cmd[@]}" "$build/cb_info" -J "$out/info.json" > "$out/info.txt"
else
  "$build/cb_info" -J "$out/info.json" > "$out/info.txt"
fi
[ -n "$list" ] || "$build/cb_copybw" -J "$out/copy_bw.json" | tee "$out/copy_bw.txt"

backends=(mpi engine)
if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["environment"]["gpu"].get("devices") else 1)' \
    "$out/info.json" 2>/dev/null; then
  backends+=(nccl)  # a usable GPU: NCCL runs on device buffers
fi

# Backends run back to back for each benchmark (not one backend after the other): this
# VM's speed drifts over minutes (see docs/methodology.md, "Comparing backends"), and a ratio should
# compare runs made under the same conditions.
dev_of() { [ "$1" = nccl ] && echo "-d cuda" || true; }

headline_steps() {  # the default: the headline comparisons (next_step: counted, or run)
local hl=(-m 4:4M) b
[ "$quick" = "--quick" ] && hl=()
for bench in latency bw; do
  for backend in mpi engine; do run pair "$bench" "$backend" "$backend" -c "${hl[@]}"; done
done
# mpi and engine interleaved in one run each (pass by pass, shuffled): the paired ratio, its
# interval and verdict per size; NCCL (device buffers) beside them.
for coll in allreduce bcast; do
  run "$np" "$coll" mpi,engine mpi-engine -c "${hl[@]}"
  if [[ " ${backends[*]} " = *" nccl "* ]]; then
    run "$np" "$coll" nccl nccl -c -d cuda "${hl[@]}"
  fi
done
# overlap: the non-blocking alltoall with 10 test calls spread through the dummy compute
for b in "${backends[@]}"; do
  # shellcheck disable=SC2046
  run "$np" ialltoall "$b" "$b-t10" -c -t 10 $(dev_of "$b") "${hl[@]}"
done
# one DL gradient replay: ResNet-50's gradients in DDP buckets, with the emulated backward
if [ -x "$build/cb_replay" ]; then
  local iters=(-i 5 -x 1)
  [ "$quick" = "--quick" ] && iters=(-i 2 -x 1)
  for b in "${backends[@]}"; do
    local mem=host
    [ "$b" = nccl ] && mem=cuda
    local name="replay-resnet50-ddp-trace.$b.$mem"
    next_step "cb_replay --backend $b --model resnet50 --fusion ddp --compute trace" ||
      continue
    cb_launch_cmd "$np"
    # shellcheck disable=SC2046
    "${CB_LAUNCH[@]}" "$build/cb_replay" --backend "$b" --model resnet50 --fusion ddp \
      --compute trace "${iters[@]}" "${repeat[@]}" $(dev_of "$b") "${progress[@]}" \
      -J "$out/$name.json" | tee "$out/$name.txt" ||
      echo "sweep: cb_replay $b resnet50 ddp trace failed; continuing" >&2
  done
fi
}  # headline_steps

all_steps() {  # --full: every benchmark run of the sweep (next_step: counted, or run)
# latency, bw, bibw: exactly two ranks (on two nodes on a cluster); mbw_mr: CB_NP ranks,
# pairs r -> r + NP/2 (an odd count leaves the last rank idle).
mbw_pairs=()
if [ $((np % 2)) = 1 ]; then mbw_pairs=(-p $((np / 2))); fi
for bench in latency bw bibw mbw_mr; do
  ranks=pair extra=()
  if [ "$bench" = mbw_mr ]; then ranks=$np extra=("${mbw_pairs[@]}"); fi
  for backend in mpi engine; do run "$ranks" "$bench" "$backend" "$backend" -c "${extra[@]}"; done
  # engine with plain (page-aligned heap) buffers instead of its shared-memory ones
  if [ "$bench" = bw ]; then run pair bw engine engine-plain --alloc plain -c; fi
done
# Persistent and partitioned requests (MPI_Send_init/MPI_Recv_init, MPI_Psend_init/
# MPI_Precv_init + MPI_Start): MPI only; multi_lat: the pairs of the mbw_mr layout
# ping-pong at once.
# --quick (tests/integration: the main job's pipeline within its time budget) runs one of
# each kind: latency_persistent, sendrecv on mpi, put_latency.
persistent=(latency_persistent bw_persistent bibw_persistent partitioned_latency)
exchange_backends=("${backends[@]}")
rma=(put_latency put_bw put_bibw get_latency get_bw acc_latency get_acc_latency fop_latency
  cas_latency)
if [ "$quick" = "--quick" ]; then
  persistent=(latency_persistent) exchange_backends=(mpi) rma=(put_latency)
fi
for bench in "${persistent[@]}"; do run pair "$bench" mpi mpi -c; done
if [ "$quick" != "--quick" ]; then run "$np" multi_lat mpi mpi -c "${mbw_pairs[@]}"; fi
# nccl-tests' sendrecv (ring) on every backend; hypercube (a power-of-two rank count).
for backend in "${exchange_backends[@]}"; do
  # shellcheck disable=SC2046
  run "$np" sendrecv "$backend" "$backend" -c $(dev_of "$backend")
  if [ $((np & (np - 1))) = 0 ]; then
    # shellcheck disable=SC2046
    run "$np" hypercube "$backend" "$backend" -c $(dev_of "$backend")
  fi
done
# One-sided (MPI RMA), OMB's defaults (-w allocate; -s flush, put_bibw pscw): MPI windows,
# so the mpi backend only.
for bench in "${rma[@]}"; do run pair "$bench" mpi mpi -c; done
for coll in allreduce bcast alltoall allgather reduce_scatter reduce barrier alltoallv; do
  for backend in "${backends[@]}"; do
    # shellcheck disable=SC2046
    run "$np" "$coll" "$backend" "$backend" -c $(dev_of "$backend")
  done
  # The engine's variants: its shared-memory path off (algorithms over MPI point-to-point),
  # every algorithm at every size, plain buffers.
  CB_ENGINE_SHM=0 run "$np" "$coll" engine engine-p2p -c
  run "$np" "$coll" engine engine-all --algo all -c
  if [ "$coll" != alltoall ]; then run "$np" "$coll" engine engine-plain --alloc plain -c; fi
  if [ "$coll" = alltoallv ]; then  # MoE routing skew: a Zipf-loaded hot receiver
    for backend in "${backends[@]}"; do
      # shellcheck disable=SC2046
      run "$np" alltoallv "$backend" "$backend-zipf" --counts zipf:1.2 -c $(dev_of "$backend")
    done
  fi
done
for coll in iallreduce ibcast ialltoall iallgather ireduce_scatter ireduce ialltoallv; do
  for t in 0 10; do
    for backend in "${backends[@]}"; do
      # shellcheck disable=SC2046
      run "$np" "$coll" "$backend" "$backend-t$t" -c -t "$t" $(dev_of "$backend")
    done
  done
  # the engine advancing its schedules in a background thread
  if [ "$coll" != ibcast ]; then run "$np" "$coll" engine engine-pt-t0 --progress-thread -t 0 -c; fi
done

# OMB's other collectives (docs/benchmarks.md): every blocking, non-blocking and persistent
# form on the MPI backend and neighborhood ones on a 2-D grid, at five sizes (4 B to 256 KiB,
# x16), so the results folder stays complete without a full sweep of each; the v forms with
# a Zipf skew; gather, scatter and their v forms on the engine too. A persistent form the
# library gets wrong (MPICH 4.0's allgather, gather, scatter) is refused (exit 2, saying why)
# and the sweep goes on.
few=(-m 4:256K --stepfactor 16)
[ "$quick" = "--quick" ] && few=()
omb=(gather gatherv scatter scatterv allgatherv reduce_scatterv alltoallw ibarrier)
for coll in gather gatherv scatter scatterv allgatherv reduce_scatterv alltoallw; do omb+=("i$coll"); done
for coll in allreduce bcast alltoall reduce barrier alltoallv alltoallw allgather allgatherv \
  reduce_scatter reduce_scatterv gather gatherv scatter scatterv; do omb+=("${coll}_persistent"); done
for coll in allgather allgatherv alltoall alltoallv alltoallw; do
  omb+=("neighbor_$coll" "ineighbor_$coll")
done
[ "$quick" = "--quick" ] && omb=(gatherv iscatter allreduce_persistent neighbor_alltoall)
for bench in "${omb[@]}"; do
  extra=()
  case "$bench" in
    *barrier*) ;;
    *v | *w | *v_persistent | *w_persistent) extra=("${few[@]}" --counts zipf:1.2 -c) ;;
    *) extra=("${few[@]}" -c) ;;
  esac
  run "$np" "$bench" mpi mpi "${extra[@]}"
  case "$bench" in  # the engine's own (binomial, shm) where it has them: its default choice
    gather | gatherv | scatter | scatterv | allgatherv) run "$np" "$bench" engine engine "${extra[@]}" ;;
  esac
done

# DL gradient replay, where cb_replay exists: every model, grouping policy and backend,
# without compute (pure communication) and with the emulated backward pass.
if [ -x "$build/cb_replay" ]; then
  iters=(-i 5 -x 1)  # x CB_REPEAT passes (10 steps in one pass before --repeat)
  models=(resnet50 vgg16 bert-base gpt2)
  if [ "$quick" = "--quick" ]; then iters=(-i 2 -x 1); models=(resnet50); fi
  for model in "${models[@]}"; do
    for fusion in none horovod ddp; do
      for compute in none trace; do
        for backend in "${backends[@]}"; do  # back to back, as above
          mem=host
          [ "$backend" = nccl ] && mem=cuda
          name="replay-$model-$fusion-$compute.$backend.$mem"
          next_step "cb_replay --backend $backend --model $model --fusion $fusion" \
            "--compute $compute" || continue
          cb_launch_cmd "$np"
          # shellcheck disable=SC2046
          "${CB_LAUNCH[@]}" "$build/cb_replay" --backend "$backend" --model "$model" \
            --fusion "$fusion" --compute "$compute" "${iters[@]}" "${repeat[@]}" \
            $(dev_of "$backend") "${progress[@]}" \
            -J "$out/$name.json" | tee "$out/$name.txt" ||
            echo "sweep: cb_replay $backend $model $fusion $compute failed; continuing" >&2
        done
      done
    done
  done
fi

# Sharded data parallelism (GPT-2 under FSDP and ZeRO-2) and a MoE layer stack (Mixtral's
# 32 layers, 256 tokens per rank, bf16, uniform and Zipf-skewed routing), same backends.
if [ -x "$build/cb_replay" ]; then
  replay_runs=("gpt2 --parallel fsdp|gpt2-fsdp" "gpt2 --parallel zero2|gpt2-zero2"
               "mixtral-8x7b --tokens 256 -T bf16|mixtral-uniform"
               "mixtral-8x7b --tokens 256 -T bf16 --counts zipf:1.2|mixtral-zipf")
  if [ "$quick" = "--quick" ]; then
    replay_runs=("resnet50 --parallel fsdp|resnet50-fsdp"
                 "switch-base-8 --tokens 64|switch-uniform")
  fi
  for spec in "${replay_runs[@]}"; do
    read -r -a args <<< "${spec%|*}"
    for compute in none trace; do
      for backend in mpi engine; do  # host buffers: NCCL's device runs are in the GPU script
        name="replay-${spec#*|}-$compute.$backend.host"
        next_step "cb_replay --backend $backend --model ${spec%|*} --compute $compute" || continue
        cb_launch_cmd "$np"
        "${CB_LAUNCH[@]}" "$build/cb_replay" --backend "$backend" --model "${args[@]}" \
          --compute "$compute" "${iters[@]}" "${repeat[@]}" -c "${progress[@]}" \
          -J "$out/$name.json" | tee "$out/$name.txt" ||
          echo "sweep: cb_replay $backend ${spec%|*} $compute failed; continuing" >&2
      done
    done
  done
fi
}  # all_steps

steps_of=headline_steps
[ -n "$full" ] && steps_of=all_steps
echo "sweep: $([ -n "$full" ] && echo "every benchmark (--full)" ||
  echo "the headline comparisons (--full: every benchmark)")${quick:+, --quick}"
$steps_of  # counting
[ -n "$list" ] && exit 0
steps=$step counting=0 step=0 started=$(date +%s)
$steps_of

bash "$here/plots.sh" "$out" mpi || echo "sweep: plots/summary incomplete (see above)" >&2
echo "sweep: results in $out"
