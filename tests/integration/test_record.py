"""libcb_record.so beyond the C int bindings (test_replay.py has the round trip of
record_app.cpp): the MPI-4 large-count bindings ("_c", which mpi4py 4 calls) and Fortran
programs ("use mpi" and "use mpi_f08", compiled here with mpif90)."""
import os
import shutil
import subprocess

from cbtest import Failure, case, check, load_json

LABELS = ('release', 'other_mpis', 'asan', 'mpi')  # tests/labels.md

HERE = os.path.dirname(os.path.abspath(__file__))
TIMING = ("compute_us", "start_us", "duration_us")

# What record_app_c.cpp issues, as the recorder must write it (comm_size 2 unless noted):
# the "_c" forms under their own names, recorded as the int forms are.
RECORDED_C = [
    dict(coll="allreduce", count=1000, dtype="float", name="MPI_Allreduce_c"),
    dict(coll="allreduce", count=256, dtype="double", op="max", name="MPI_Iallreduce_c"),
    dict(coll="reduce", count=16, dtype="double", op="min", root=0, name="MPI_Reduce_c"),
    dict(coll="reduce", count=8, dtype="int32", root=1, name="MPI_Ireduce_c"),
    dict(coll="bcast", count=10, dtype="int64", root=1, name="MPI_Bcast_c"),
    dict(coll="bcast", count=33, dtype="char", root=0, name="MPI_Ibcast_c"),
    dict(coll="alltoall", count=8, dtype="int32", name="MPI_Alltoall_c"),
    dict(coll="alltoall", count=4, dtype="float", name="MPI_Ialltoall_c"),
    dict(coll="allgather", count=5, dtype="int32", name="MPI_Allgather_c"),
    dict(coll="allgather", count=3, dtype="double", name="MPI_Iallgather_c"),
    dict(coll="reduce_scatter", count=8, dtype="float", name="MPI_Reduce_scatter_block_c"),
    dict(coll="reduce_scatter", count=2, dtype="int64", name="MPI_Ireduce_scatter_block_c"),
    dict(coll="alltoall", count=7, dtype="int32",
         name="MPI_Alltoallv_c (recorded as alltoall of its mean per-peer count)"),
    dict(coll="allreduce", count=12, dtype="char",
         name="MPI_Allreduce_c (MPI_SHORT recorded as bytes)"),
    # a count above 2^31-1: the trace's counts are 64-bit, so it is recorded
    dict(coll="bcast", count=3_000_000_000, dtype="char", root=0, name="MPI_Bcast_c",
         comm_size=1),
    # then two bcasts of 2 TiB (MPI_Bcast_c of 2^41 chars, MPI_Bcast of 2^21 x 1 MiB): over
    # the trace's 1 TiB per operation, not recorded
    dict(coll="barrier", name="MPI_Barrier"),
]

# What record_app_f.f90 issues (Fortran types are recorded as their C equivalents).
RECORDED_F = [
    dict(coll="allreduce", count=4, dtype="double", name="MPI_Allreduce"),
    dict(coll="bcast", count=10, dtype="int32", root=1, name="MPI_Bcast"),
    dict(coll="allreduce", count=6, dtype="float", op="max", name="MPI_Iallreduce"),
    dict(coll="barrier", name="MPI_Barrier"),
]


def record(env, app, base, np=2):
    """Runs `app` under the recorder; returns the run and each rank's ops without timing."""
    lib = os.path.join(env.bindir, "libcb_record.so")
    check(os.path.exists(lib), f"missing {lib}")
    run_env = dict(os.environ, LD_PRELOAD=lib, CB_RECORD=base)
    try:
        p = subprocess.run([env.mpirun, "-n", str(np), app], env=run_env, capture_output=True,
                           text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"HANG: {app} under the recorder: {e}")
    check(p.returncode == 0, f"{app} under the recorder failed: {p.stdout}\n{p.stderr}")
    stem = base[:-len(".json")]
    ops = []
    for rank in range(np):
        t = load_json(f"{stem}.rank{rank}.json")
        check(t["source"] == "recorder" and t["world_size"] == np, f"rank {rank} header: {t}")
        ops.append([{k: v for k, v in op.items() if k not in TIMING} for op in t["ops"]])
    return p, ops


@case
def record_large_count_bindings(env):
    app = os.path.join(env.bindir, "tests", "cb_record_app_c")
    check(os.path.exists(app), f"missing {app}")
    probe = subprocess.run([app], capture_output=True, text=True, timeout=30)
    if "no MPI-4 large-count bindings" in probe.stdout:
        return f"SKIP: {probe.stdout.strip()}"
    p, ops = record(env, app, env.path("large.json"))
    check("2 ranks, 0 wrong results" in p.stdout, f"results:\n{p.stdout}")
    want = [dict(op, comm_size=op.get("comm_size", 2)) for op in RECORDED_C]
    for rank, got in enumerate(ops):
        check(got == want, f"rank {rank}: recorded ops differ:\n{got}\nexpected\n{want}")
        said = [l for l in p.stderr.splitlines() if l.startswith(f"libcb_record: rank {rank}: ")]
        check(said == [f"libcb_record: rank {rank}: MPI_Bcast_c of 2199023255552 elements of 1 "
                       "bytes: more than a trace holds per operation (1 TiB), not recorded "
                       "(said once; MPI_Finalize counts them)",
                       f"libcb_record: rank {rank}: 2 calls over 1 TiB not recorded"],
              f"rank {rank}: the over-1-TiB calls said once and counted:\n{p.stderr}")


@case
def record_fortran_bindings(env):
    """MPICH's "use mpi" calls the C MPI_ functions, so everything is recorded. Its
    "use mpi_f08" (MPICH 4.0) calls the C functions for routines with buffers only and
    PMPI_Init, PMPI_Barrier, PMPI_Finalize directly: the recorder starts at the first
    collective and writes the trace from MPI_COMM_SELF's attribute deletion in
    PMPI_Finalize; the barrier is not seen."""
    mpif90 = env.mpi_tool("mpif90")
    if not mpif90:
        return f"SKIP: no mpif90 beside {env.real_mpirun} (Debian: gfortran, libmpich-dev)"
    src = os.path.join(HERE, "..", "dl_patterns", "record_app_f.f90")
    built = {}
    for variant, flags in (("mpi", []), ("mpi_f08", ["-DF08"])):
        exe = env.path(f"record_app_{variant}")
        c = subprocess.run([mpif90, "-cpp", *flags, "-o", exe, src], capture_output=True,
                           text=True, timeout=120)
        if c.returncode == 0:
            built[variant] = exe
        elif variant == "mpi":
            return f"SKIP: mpif90 cannot build a 'use mpi' program:\n{c.stderr[-1000:]}"
    want = [dict(op, comm_size=2) for op in RECORDED_F]
    for variant, exe in built.items():
        p, ops = record(env, exe, env.path(f"{variant}.json"))
        check("2 ranks, 0 wrong results" in p.stdout, f"{variant}: results:\n{p.stdout}")
        for rank, got in enumerate(ops):
            if variant == "mpi_f08" and got == want[:-1]:
                continue  # PMPI_Barrier called directly: not seen
            check(got == want, f"{variant}: rank {rank}: recorded ops differ:\n{got}\n"
                               f"expected\n{want}")
    if "mpi_f08" not in built:
        print("mpif90 has no mpi_f08 module: only 'use mpi' was recorded")
