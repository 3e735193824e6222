"""cb_reduce, cb_ireduce, cb_barrier, cb_alltoallv and cb_ialltoallv on the MPI and engine
backends (JSON, busbw factors, roots, in place, count patterns, bad input), and half /
bfloat16 reductions on MPI through collbench's user-defined MPI_Op."""
from cbtest import case, check, check_document, doubling, load_json

LABELS = ('release', 'other_mpis', 'asan', 'mpi')  # tests/labels.md


def check_busbw(res, factor):
    check(abs(res["busbw_GBps"] - res["algbw_GBps"] * factor) <= 1e-9 + 1e-9 * res["busbw_GBps"],
          f"busbw = algbw x {factor}: {res}")
    check(res["validation"]["passed"], f"validation at {res['bytes']}: {res['validation']}")


@case
def reduce_json_roots_and_in_place(env):
    for backend in ("mpi", "engine"):
        out = env.path(f"reduce.{backend}.json")
        env.ok(2, "reduce", ["--backend", backend, "-m", "4:64K", "-c", "-i", "5", "-x", "1",
                             "-k", "rotate", "-J", out])
        doc = load_json(out)
        check_document(doc, "reduce", 2, doubling(4, 65536))
        for res in doc["results"]:
            check_busbw(res, 1.0)  # nccl-tests: reduce's bus factor is 1
            check(res["root"] == "rotate" and res["op"] == "sum", "root and op recorded")
        # odd element counts, in place on the root, another dtype and op
        env.ok(2, "reduce", ["--backend", backend, "-m", "12:12K", "-c", "-i", "2", "-x", "1",
                             "-k", "1", "-l", "--dtype", "int64", "--op", "max"])


@case('tsan', '-other_mpis')
def reduce_every_engine_algorithm_three_ranks(env):
    """Non-power-of-two rank count (yield): every algorithm, blocking and non-blocking on the
    progress thread."""
    env.ok(3, "reduce", ["--backend", "engine", "--algo", "all", "-m", "4:16K", "-c", "-i", "2",
                         "-x", "1", "-k", "2", "--wait", "yield"], timeout=120)
    env.ok(3, "ireduce", ["--backend", "engine", "--algo", "all", "-m", "4:16K", "-c", "-i", "2",
                          "-x", "1", "-k", "1", "--progress-thread", "--wait", "yield"],
           timeout=120)


@case
def mpi_half_and_bfloat16_user_op(env):
    """MPI reduces 16-bit floats with collbench's MPI_Op (Horovod's approach), stated in the
    header and the JSON; every element checked."""
    for dtype, name in (("half", "fp16"), ("bfloat16", "bf16")):
        for op in ("sum", "prod", "max", "min"):
            out = env.path(f"ar.{dtype}.{op}.json")
            r = env.ok(2, "allreduce", ["-m", "2:8K", "-c", "-i", "2", "-x", "1", "--dtype", dtype,
                                        "--op", op, "-J", out])
            check(f"MPI_Op: user-defined ({name} {op}, collbench)" in r.out, r.out)
            for res in load_json(out)["results"]:
                check(res["reduction"].startswith(f"MPI_Op: user-defined ({name} {op}"), res)
                check(res["validation"]["passed"], res)
        env.ok(2, "reduce", ["-m", "2:8K", "-c", "-i", "2", "-x", "1", "--dtype", dtype, "-k",
                             "1", "-l"])
        env.ok(2, "iallreduce", ["-m", "2:4K", "-c", "-i", "2", "-x", "1", "--dtype", dtype])
        env.ok(2, "ireduce", ["-m", "2:4K", "-c", "-i", "2", "-x", "1", "--dtype", dtype,
                              "--op", "max"])


@case
def barrier_one_row(env):
    for backend, algo in (("mpi", []), ("engine", ["--algo", "all"])):
        out = env.path(f"barrier.{backend}.json")
        r = env.ok(2, "barrier", ["--backend", backend, "-i", "50", "-x", "5", "-f", "-J", out,
                                  *algo])
        check("# Size" not in r.out and "Avg Latency(us)" in r.out, r.out)
        doc = load_json(out)
        got = [(res["bytes"], res["algo"]) for res in doc["results"]]
        want = [(0, "")] if backend == "mpi" else [(0, "dissemination"), (0, "shm"), (0, "small"),
                                                           (0, "mpi")]
        check(got == want, f"one size-0 record per algorithm: {got}")
        for res in doc["results"]:
            check(res["latency_us"]["avg"] > 0 and "busbw_GBps" not in res, res)
    env.ok(3, "barrier", ["--backend", "engine", "--algo", "all", "-i", "20", "--wait", "yield"],
           timeout=60)


@case('tsan')
def alltoallv_patterns(env):
    for backend, counts in (("mpi", "uniform"), ("mpi", "zipf:3,7"), ("engine", "zipf:3,7"),
                            ("engine", "random:4")):
        out = env.path(f"a2av.{backend}.{counts}.json")
        env.ok(2, "alltoallv", ["--backend", backend, "-m", "4:16K", "-c", "-i", "3", "-x",
                                "1", "--counts", counts, "--dtype", "half", "-J", out])
        doc = load_json(out)
        check_document(doc, "alltoallv", 2, doubling(4, 16384))
        check(doc["options"]["counts"].split(",")[0] == counts.split(",")[0], doc["options"])
        for res in doc["results"]:
            check_busbw(res, 0.5)
            c = res["counts"]
            check(c["mean_per_peer"] == res["count"] and c["imbalance"] >= 1.0, c)
            skewed = counts.startswith("zipf:3")
            check(not skewed or res["count"] < 4 or c["imbalance"] > 1.2, f"skew: {c}")
    env.ok(3, "alltoallv", ["--backend", "engine", "--algo", "all", "-m", "1:4K", "-c", "-i", "2",
                            "--counts", "zipf:1.1", "--dtype", "char", "--wait", "yield"],
           timeout=60)
    env.ok(3, "ialltoallv", ["--backend", "engine", "-m", "8:4K", "-c", "-i", "2", "--counts",
                             "random:9", "--progress-thread", "--wait", "yield"], timeout=60)
    env.ok(2, "ialltoallv", ["-m", "8:4K", "-c", "-i", "2", "--counts", "zipf:2"])


BAD_INPUT = [
    ("alltoallv", ["--counts", "zipf"], "--counts"),
    ("alltoallv", ["--counts", "zipf:-1"], "Zipf exponent"),
    ("alltoallv", ["--counts", "poisson:3"], "unknown pattern"),
    ("alltoallv", ["--counts", "random:x"], "seed"),
    ("alltoallv", ["-l"], "no in-place form"),
    ("alltoall", ["--counts", "zipf:1"], "--counts is for alltoallv, alltoallw"),
    ("barrier", ["-m", "64"], "no message size"),
    ("barrier", ["--dtype", "double"], "no message size"),
    ("reduce", ["-k", "fixed:5"], "out of range"),
]


@case('-other_mpis')
def reduce_barrier_alltoallv_bad_input(env):
    for bench, args, needle in BAD_INPUT:
        r = env.run(2, bench, args, timeout=30)
        check(r.rc == 2, f"{bench} {args}: expected exit 2: {r}")
        check(needle in r.err and r.err.count("collbench: error") == 1, f"{bench} {args}: {r}")
