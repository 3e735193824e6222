#!/usr/bin/env bash
# The whole GPU run in one call, on the GPU test host (one H100/H200, CUDA 13, Python 3.12
# with the nvidia-nccl-cu13 package; see ../shared/docs/gpu-machine.md and docs/gpu.md):
#
#   scripts/gpu_check.sh OUTDIR
#
#  1. finds nvcc, the GPU and NCCL (the Python package's copy, or NCCL_ROOT);
#  2. sets up MPI if mpirun is missing, and CLI11 / nlohmann-json / GoogleTest / pkgconf
#     if CMake cannot find them, from the .deb files scripts/fetch_gpu_deps.sh put in
#     .gpu-deps/ on the development machine (unpacked into a scratch folder, never into /);
#  3. configures (CUDA architecture 90, NCCL on) and builds in build-gpu-check/;
#  4. runs the GPU tests: ctest -R 'gpu_|int_gpu';
#  5. runs the sweep: reduction kernels vs device-to-device copy (cb_gpu_bench), NCCL
#     allreduce (also with -G, CUDA graph launch) / bcast / alltoall on one rank with
#     device buffers, the engine and MPI with device buffers where this build supports them;
#  6. writes every log and JSON into OUTDIR, and OUTDIR/summary.txt with one line per step
#     and the headline numbers.
#
# Exit status: 0 when the build, the GPU tests and the required runs passed, 1 otherwise
# (the sweep still runs after a failed test, so one call yields everything it can). About
# 5 minutes on 16 cores; each step has its own time limit so that the whole stays under 10.
#
# Environment: NCCL_ROOT (an NCCL with include/ and lib/), GPU_CHECK_BUILD (build folder),
# GPU_CHECK_SCRATCH (unpacked packages), GPU_CHECK_FORCE_KIT=1 (use .gpu-deps even where
# the host has MPI and the libraries), GPU_CHECK_BUILD_LIMIT (seconds, default 300),
# GPU_CHECK_TESTS=0 / GPU_CHECK_DEVICE=0 (leave out the GPU tests / the device sweep, e.g.
# for a second call on a warm host that only adds host runs), GPU_CHECK_TUNE_RANKS="16 8 4"
# (the tuning table's host measurements at those rank counts, step 5c).
set -euo pipefail

if [ $# -ne 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: scripts/gpu_check.sh OUTDIR" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
root=$PWD
build=${GPU_CHECK_BUILD:-$root/build-gpu-check}
scratch=${GPU_CHECK_SCRATCH:-$root/build-gpu-check-deps}  # /build* is git-ignored
jobs=$(nproc)
status=0
: >"$out/gpu_check.log"
: >"$out/summary.txt"

log() { printf '[gpu_check %3ds] %s\n' "$SECONDS" "$*" | tee -a "$out/gpu_check.log" >&2; }
die() {
  log "FATAL: $*"
  printf 'FATAL    %s\n' "$*" >>"$out/summary.txt"
  exit 1
}
record() {  # RESULT TEXT: one line of the summary
  printf '%-8s %s\n' "$1" "$2" >>"$out/summary.txt"
  log "$1 $2"
}

# step NAME REQUIRED LIMIT_S COMMAND...: runs COMMAND with its output in OUTDIR/NAME.log,
# records PASS/FAIL/TIMEOUT; a failed required step makes the exit status 1.
# Every step's limit is cut to what is left before GPU_CHECK_DEADLINE (seconds since the
# start; default 480, so that one call of the device tool, 10 minutes at most, ends with
# time to pack OUTDIR): a step that cannot start before it is recorded SKIPPED, never run.
deadline=${GPU_CHECK_DEADLINE:-480}
step() {
  local name=$1 required=$2 limit=$3
  shift 3
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 10 ]; then
    record SKIPPED "$name: the ${deadline}s deadline (GPU_CHECK_DEADLINE) was reached"
    if [ "$required" = yes ]; then status=1; fi
    return 0
  fi
  [ "$limit" -le "$left" ] || limit=$left
  log "$name (limit ${limit}s): $*"
  local rc=0
  timeout --kill-after=15 "$limit" "$@" >"$out/$name.log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    record PASS "$name"
    return 0
  fi
  local why
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    why="TIMEOUT"
  else
    why="FAIL($rc)"
  fi
  record "$why" "$name$([ "$required" = yes ] || echo ' (optional)'): $(tail -n 1 "$out/$name.log" | cut -c1-200)"
  if [ "$required" = yes ]; then status=1; fi
  return 0
}

# ---- 1. Toolchain, GPU, NCCL ----

nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] || die "nvcc not found (PATH or /usr/local/cuda/bin)"
command -v cmake >/dev/null || die "cmake not found"
{
  echo "date: $(date -Is)"
  echo "host: $(hostname)"
  echo "git: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  "$nvcc" --version | tail -n 2
  cmake --version | head -n 1
  nvidia-smi --query-gpu=name,memory.total,driver_version,pci.bus_id --format=csv 2>&1 ||
    echo "nvidia-smi failed"
  nvidia-smi --query-gpu=compute_mode --format=csv 2>&1 || true
  echo "nvidia-cuda-mps-control: $(command -v nvidia-cuda-mps-control || echo absent)"
  echo "cores: $(nproc); memory: $(free -g | awk '/^Mem/ {print $2}') GiB"
} >"$out/environment.txt" 2>&1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
log "nvcc: $("$nvcc" --version | tail -n 1); GPUs: ${gpus:-0}"
[ "${gpus:-0}" -gt 0 ] || record WARNING "nvidia-smi lists no GPU: the GPU tests will skip"

# NCCL: NCCL_ROOT if set, else the pip package nvidia-nccl-cu13 (__path__ also works if the
# package is a namespace package). Its header and library are looked for a few levels deep
# in case a wheel nests them. The package ships only libnccl.so.2, without the libnccl.so
# name the linker wants, so a small shim folder provides both names.
nccl_dir=${NCCL_ROOT:-$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)}
[ -n "$nccl_dir" ] && [ -d "$nccl_dir" ] ||
  die "NCCL not found: set NCCL_ROOT or install the nvidia-nccl-cu13 Python package"
nccl_h=$(find -L "$nccl_dir" -maxdepth 4 -name nccl.h -print -quit 2>/dev/null || true)
nccl_lib=$(find -L "$nccl_dir" -maxdepth 4 -name 'libnccl.so*' -print -quit 2>/dev/null || true)
[ -n "$nccl_h" ] && [ -n "$nccl_lib" ] || die "no nccl.h or libnccl.so* under $nccl_dir"
shim=$scratch/nccl
rm -rf "$shim"
mkdir -p "$shim/lib"
ln -s "$(dirname "$nccl_h")" "$shim/include"
ln -s "$(readlink -f "$nccl_lib")" "$shim/lib/libnccl.so"
ln -s "$(readlink -f "$nccl_lib")" "$shim/lib/libnccl.so.2"
export LD_LIBRARY_PATH=$shim/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log "NCCL: $nccl_lib ($(grep -m1 -o 'NCCL_VERSION_CODE [0-9]*' "$nccl_h" || echo version unknown))"

# ---- 2. Dependencies from .gpu-deps when the host lacks them ----

kit=$scratch/kit
unpack_kit() {
  local tarball=$root/.gpu-deps/kit.tar.xz
  [ -f "$tarball" ] || die "$1 is missing and .gpu-deps/kit.tar.xz does not exist: run" \
    "scripts/fetch_gpu_deps.sh on the development machine and bring .gpu-deps/ along"
  if [ ! -f "$kit/.unpacked" ] || ! cmp -s "$root/.gpu-deps/SHA256SUMS" "$kit/.unpacked"; then
    log "unpacking .gpu-deps/kit.tar.xz into $kit"
    rm -rf "$kit"
    mkdir -p "$kit"
    tar -C "$kit" -xJf "$tarball"
    cp "$root/.gpu-deps/SHA256SUMS" "$kit/.unpacked" 2>/dev/null || touch "$kit/.unpacked"
  fi
  export LD_LIBRARY_PATH=$kit/usr/lib/x86_64-linux-gnu:$kit/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
}

cmake_args=()
prefix_path=()
# Harmless for MPICH; lets Open MPI's mpirun start ranks as root, should the host have it.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The kit's MPICH 4.0.2 (the project's default MPI) comes first whenever .gpu-deps holds it:
# the GPU host's own MPI is Open MPI 4.1.6, an MPI 3.1 without the persistent collectives
# (MPI_Allreduce_init, ...) that collbench builds against. GPU_CHECK_HOST_MPI=1 takes the
# host's mpirun/mpicxx instead.
if [ -z "${GPU_CHECK_FORCE_KIT:-}" ] && { [ -n "${GPU_CHECK_HOST_MPI:-}" ] ||
   [ ! -f "$root/.gpu-deps/kit.tar.xz" ]; } && command -v mpirun >/dev/null &&
   command -v mpicxx >/dev/null; then
  mpirun=$(command -v mpirun)
  mpicxx=$(command -v mpicxx)
  cmake_args+=(-DMPI_CXX_COMPILER="$mpicxx")
  log "MPI: $mpirun ($(mpirun --version 2>&1 | head -n 1))"
else
  unpack_kit "MPI (mpirun, mpicxx)"
  bin=$kit/usr/bin
  # Debian's wrappers hard-code /usr; point them at the unpacked tree.
  for w in mpicxx.mpich mpicc.mpich; do
    sed -i -e "s|^prefix=.*|prefix=$kit/usr|" -e "s|^exec_prefix=.*|exec_prefix=$kit/usr|" \
      -e "s|^includedir=.*|includedir=$kit/usr/include/x86_64-linux-gnu/mpich|" \
      -e "s|^libdir=.*|libdir=$kit/usr/lib/x86_64-linux-gnu|" "$bin/$w"
  done
  ln -sf mpicxx.mpich "$bin/mpicxx"
  ln -sf mpiexec.hydra "$bin/mpirun"
  ln -sf mpiexec.hydra "$bin/mpiexec"
  export PATH=$bin:$PATH
  export HYDRA_LAUNCHER=fork  # one host: start ranks directly, never through ssh
  export MPICH_CXX=${CXX:-$(command -v g++ || command -v c++)}
  mpirun=$bin/mpiexec.hydra
  mpicxx=$bin/mpicxx.mpich
  cmake_args+=(-DMPI_CXX_COMPILER="$mpicxx" -DMPIEXEC_EXECUTABLE="$mpirun")
  log "MPI: MPICH from .gpu-deps ($("$bin/mpicxx.mpich" -show))"
fi
step mpi_smoke yes 60 "$mpirun" -n 2 hostname
[ "$status" -eq 0 ] || die "mpirun cannot start 2 processes; see $out/mpi_smoke.log"

# Header libraries and GoogleTest: ask CMake itself whether it finds them.
probe=$scratch/probe
mkdir -p "$probe"
cat >"$probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(probe LANGUAGES CXX)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.2 REQUIRED)
find_package(GTest REQUIRED)
find_package(PkgConfig REQUIRED)
EOF
if [ -n "${GPU_CHECK_FORCE_KIT:-}" ] || ! cmake -S "$probe" -B "$probe/build" >"$out/probe.log" 2>&1; then
  unpack_kit "CLI11, nlohmann-json, GoogleTest or pkg-config"
  prefix_path+=("$kit/usr")
  command -v pkg-config >/dev/null || cmake_args+=(-DPKG_CONFIG_EXECUTABLE="$kit/usr/bin/pkgconf")
  log "CLI11 / nlohmann-json / GoogleTest / pkgconf: from .gpu-deps"
fi
if [ ${#prefix_path[@]} -gt 0 ]; then
  cmake_args+=(-DCMAKE_PREFIX_PATH="$(IFS=';'; echo "${prefix_path[*]}")")
fi

# ---- 3. Configure and build ----

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# A build folder configured with another generator or another MPI starts over: FindMPI
# keeps what it found in the cache even when -DMPI_CXX_COMPILER names another wrapper.
if [ -f "$build/CMakeCache.txt" ]; then
  if ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}" "$build/CMakeCache.txt" ||
     ! grep -q "^MPI_CXX_COMPILER:[A-Z]*=$mpicxx\$" "$build/CMakeCache.txt"; then
    log "starting $build over (another generator or MPI)"
    rm -rf "$build"
  fi
fi
step configure yes 180 cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_BUILD_TESTS=ON \
  -DCOLLBENCH_CUDA=ON -DCOLLBENCH_NCCL=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DNCCL_ROOT="$shim" "${cmake_args[@]}"
[ "$status" -eq 0 ] || die "configure failed; see $out/configure.log"
# -k 0: one call shows every file that fails, not the first
keep_going=()
[ ${#generator[@]} -gt 0 ] && keep_going=(-- -k 0)
step build yes "${GPU_CHECK_BUILD_LIMIT:-300}" cmake --build "$build" -j "$jobs" "${keep_going[@]}"
[ "$status" -eq 0 ] || die "build failed; see $out/build.log"

# ---- 4. GPU tests ----

step info no 60 "$build/cb_info" -J "$out/info.json"
if [ "${GPU_CHECK_TESTS:-1}" = 1 ]; then
  step ctest yes 300 ctest --test-dir "$build" -R 'gpu_|int_gpu' --output-on-failure -j "$jobs" --timeout 150 \
    --output-junit "$out/ctest.xml"
  skipped=$(grep -c '\*\*\*Skipped\| Skipped ' "$out/ctest.log" || true)
  log "ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1); skipped: $skipped"
fi

# ---- 5. Sweep ----

# NAME REQUIRED RANKS BENCH ARGS...: JSON into OUTDIR/NAME.json. Required runs may take
# 150 s, optional ones (paths that may not exist yet, and may hang) 60 s; one size 30 s.
run() {
  local name=$1 required=$2 ranks=$3 bench=$4 limit=60
  shift 4
  [ "$required" = yes ] && limit=150
  step "$name" "$required" "$limit" "$mpirun" -n "$ranks" "$build/cb_$bench" "$@" \
    --time-limit 30 -J "$out/$name.json"
}

if [ "${GPU_CHECK_DEVICE:-1}" = 1 ]; then
step gpu_kernels yes 180 "$build/cb_gpu_bench" -J "$out/gpu_kernels.json"
run nccl_allreduce yes 1 allreduce --backend nccl -d cuda -c
run nccl_bcast yes 1 bcast --backend nccl -d cuda -c
run nccl_alltoall yes 1 alltoall --backend nccl -d cuda -c
run nccl_allreduce_graph no 1 allreduce --backend nccl -d cuda -c -G 10  # CUDA graph launch
# GPU compute beside the collective (a %globaltimer-bounded kernel on its own stream), and
# the collective's device time from CUDA events
run nccl_iallreduce no 1 iallreduce --backend nccl -d cuda -c -m 4:16M -t 8
# Device buffers on ranks sharing the GPU: the engine's CUDA IPC algorithms (one-shot,
# two-shot, the table's choice) and MPI with whole-buffer host staging (Debian's MPICH is
# not CUDA-aware), interleaved in two passes. 50 iterations above 8 KiB keep MPI's
# 64 MiB staging (about 70 ms a call) to seconds.
large=(--iterations-large 50 --warmup-large 5)
for pass in 1 2; do
  run "mpi_allreduce_staging_2ranks_$pass" yes 2 allreduce --backend mpi -d cuda --staging -c \
    -m 4:64M "${large[@]}"
  run "engine_allreduce_2ranks_$pass" yes 2 allreduce --backend engine -d cuda -c -m 4:64M \
    "${large[@]}"
  run "engine_allreduce_ipc_oneshot_2ranks_$pass" no 2 allreduce --backend engine -d cuda -c \
    -m 4:64M --algo ipc_oneshot "${large[@]}"
  run "engine_allreduce_ipc_twoshot_2ranks_$pass" no 2 allreduce --backend engine -d cuda -c \
    -m 4:64M --algo ipc_twoshot "${large[@]}"
done
run engine_bcast_2ranks no 2 bcast --backend engine -d cuda -c -m 4:64M "${large[@]}"
run mpi_bcast_staging_2ranks no 2 bcast --backend mpi -d cuda --staging -c -m 4:64M "${large[@]}"
run engine_alltoall_2ranks no 2 alltoall --backend engine -d cuda -c -m 4:16M "${large[@]}"
run mpi_alltoall_staging_2ranks no 2 alltoall --backend mpi -d cuda --staging -c -m 4:16M \
  "${large[@]}"
run engine_iallreduce_2ranks no 2 iallreduce --backend engine -d cuda -c -m 4:16M -t 8 \
  "${large[@]}"
# Point to point with device buffers: MPI through host staging (not CUDA-aware), the
# engine's transport (pipelined pinned staging).
run mpi_latency_DD_staging no 2 latency D D --staging -c -m 0:4M "${large[@]}"
run mpi_latency_HD_staging no 2 latency H D --staging -c -m 0:4M "${large[@]}"
run engine_latency_DD no 2 latency D D --backend engine -c -m 0:4M "${large[@]}"
run mpi_bw_DD_staging no 2 bw D D --staging -c -m 1:4M "${large[@]}"
run engine_allreduce_bf16_2ranks no 2 allreduce --backend engine -d cuda -c -m 4:64M -T bfloat16 \
  "${large[@]}"
run engine_allreduce_4ranks no 4 allreduce --backend engine -d cuda -c -m 4:64M "${large[@]}"
run mpi_allreduce_staging_4ranks no 4 allreduce --backend mpi -d cuda --staging -c -m 4:16M \
  "${large[@]}"
fi

# The IPC collectives again under MPS (one GPU context for every process, so their kernels
# and copies no longer time-slice): what ranks on one GPU cost without the context switches
# that dominate small messages above. GPU_CHECK_MPS=0 leaves it out.
mps=$(command -v nvidia-cuda-mps-control || true)
if [ "${GPU_CHECK_DEVICE:-1}" = 1 ] && [ "${GPU_CHECK_MPS:-1}" = 1 ] && [ -n "$mps" ]; then
  export CUDA_MPS_PIPE_DIRECTORY=$scratch/mps-pipe CUDA_MPS_LOG_DIRECTORY=$scratch/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if "$mps" -d; then
    record INFO "MPS daemon started ($mps)"
    for pass in 1 2; do  # MPI's staging to 1 MiB: the small messages are the question
      run "mps_mpi_allreduce_staging_2ranks_$pass" no 2 allreduce --backend mpi -d cuda --staging \
        -c -m 4:1M "${large[@]}"
      run "mps_engine_allreduce_ipc_oneshot_2ranks_$pass" no 2 allreduce --backend engine -d cuda \
        -c -m 4:64M --algo ipc_oneshot "${large[@]}"
      run "mps_engine_allreduce_ipc_twoshot_2ranks_$pass" no 2 allreduce --backend engine -d cuda \
        -c -m 4:64M --algo ipc_twoshot "${large[@]}"
    done
    run mps_engine_allreduce_4ranks no 4 allreduce --backend engine -d cuda -c -m 4:64M "${large[@]}"
    echo quit | "$mps" || true
  else
    record WARNING "nvidia-cuda-mps-control -d failed: no MPS runs"
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

# ---- 5b. Host collectives at 4, 8 and 16 ranks (the host's 16 cores) ----

# MPI and engine alternate (mpi, engine, mpi, engine) at each rank count, so that drift
# over the minutes of the sweep falls on both; the JSON of every pass is kept
# (host_<coll>_<ranks>_<backend>_<pass>.json). Off by default: it takes ~2.5 of the 15
# minutes a session has on the host, and results/h100-20261126/run1 (in git history at
# 9108515) holds it; set GPU_CHECK_HOST_RANKS="4 8 16" to run it.
for np in ${GPU_CHECK_HOST_RANKS-}; do
  for coll in allreduce bcast alltoall; do
    sizes=8:64M
    [ "$coll" = alltoall ] && sizes=8:4M  # per peer: 16 ranks x 4 MiB = 64 MiB a rank
    for pass in 1 2; do
      for backend in mpi engine; do
        step "host_${coll}_${np}_${backend}_$pass" no 40 "$mpirun" -n "$np" "$build/cb_$coll" \
          --backend "$backend" -m "$sizes" -i 40 -x 5 --iterations-large 10 --warmup-large 2 \
          --time-limit 20 -J "$out/host_${coll}_${np}_${backend}_$pass.json"
      done
    done
  done
done

# ---- 5c. Host measurements for the tuning table at 4, 8 and 16 ranks ----

# `--algo all` on host buffers (every engine algorithm at each size, the engine's shared
# memory on: the tier of ranks on one node), sizes a factor of 4 apart to fit the device
# time; scripts/tune.py --from ... --ranks N --merge turns them into the table's rules for
# N ranks (docs/gpu.md). GPU_CHECK_TUNE_RANKS="16 8 4" runs it.
for np in ${GPU_CHECK_TUNE_RANKS-}; do
  for coll in allreduce bcast alltoall; do
    sizes=8:32M
    [ "$coll" = alltoall ] && sizes=8:2M  # per peer: 16 ranks x 2 MiB = 32 MiB a rank
    step "tune_${coll}_$np" no 60 "$mpirun" -n "$np" "$build/cb_$coll" --backend engine \
      --algo all -m "$sizes" --stepfactor 4 -i 50 -x 5 --iterations-large 10 --warmup-large 2 \
      --time-limit 20 -J "$out/tune_${coll}_$np.json"
  done
done

# ---- 6. Summary ----

python3 - "$out" >>"$out/summary.txt" 2>>"$out/gpu_check.log" <<'EOF' || log "summary: could not read the JSON"
import json, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
k = load("gpu_kernels")
if k:
    dev = (k.get("gpu", {}).get("devices") or [{}])[0].get("name", "?")
    print(f"GPU      {dev}")
    rows = [r for r in k["results"] if r["kind"] == "reduce" and r.get("blocks_per_sm") == "auto"]
    top = max(r["bytes"] for r in rows)
    for r in rows:
        if r["bytes"] == top and r["op"] == "sum" and r["dtype"] in ("float", "half", "bfloat16"):
            ok = "meets" if r["fraction_of_copy"] >= 0.90 else "BELOW"
            print(f"KERNEL   reduce {r['dtype']} sum {top >> 20} MiB: {r['GBps']:.0f} GB/s = "
                  f"{100 * r['fraction_of_copy']:.1f}% of copy ({ok} the 90% target)")
    worst = min((r for r in rows if r["bytes"] == top), key=lambda r: r["fraction_of_copy"])
    print(f"KERNEL   slowest at {top >> 20} MiB: {worst['dtype']} {worst['op']} "
          f"{100 * worst['fraction_of_copy']:.1f}% of copy")
for name in ("nccl_allreduce", "nccl_allreduce_graph", "nccl_bcast", "nccl_alltoall",
             "engine_allreduce_2ranks_1", "engine_allreduce_ipc_oneshot_2ranks_1",
             "engine_allreduce_ipc_twoshot_2ranks_1", "mpi_allreduce_staging_2ranks_1"):
    d = load(name)
    if not d or not d.get("results"):
        continue
    r = d["results"][-1]
    valid = all(x.get("validation", {}).get("passed", False) for x in d["results"])
    print(f"RESULT   {name}: {r['bytes'] >> 20} MiB {r['latency_us']['avg']:.1f} us, "
          f"algbw {r['algbw_GBps']:.1f} GB/s, validation {'passed' if valid else 'FAILED'}")
EOF
log "done in ${SECONDS}s; summary:"
cat "$out/summary.txt" >&2
[ "$SECONDS" -lt 600 ] || log "WARNING: took ${SECONDS}s, over the 10-minute budget"
exit "$status"
