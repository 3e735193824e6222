"""Allgather and reduce_scatter (block), blocking and non-blocking, on the MPI and engine
backends: JSON figures (message size per rank, algbw over the n blocks, busbw (n-1)/n),
every dtype and op where they apply, in and out of place (MPI_IN_PLACE as MPI defines
it), 2-4 ranks (yield above 2), every engine algorithm, the progress thread."""
from cbtest import case, check, check_document, doubling, load_json
from test_collectives import REDUCIBLE, OPS, check_collective, check_overlap

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md

GATHER_SCATTER = ("allgather", "reduce_scatter")
ALGOS = {"allgather": {"ring", "recursive_doubling", "bruck", "shm", "small", "mpi"},
         "reduce_scatter": {"ring", "recursive_halving", "pairwise", "shm", "small", "mpi"}}
FAST = ["-i", "3", "-x", "1"]


@case('other_mpis')
def gather_scatter_json(env):
    for bench in GATHER_SCATTER:
        for inplace in ([], ["-l"]):
            out = env.path(f"{bench}.json")
            env.ok(2, bench, ["-m", "4:64K", "-c", "-i", "10", "-x", "2", "-J", out, *inplace])
            doc = load_json(out)
            check_document(doc, bench, 2, doubling(4, 65536))
            for res in doc["results"]:
                check_collective(res, 2, 0.5)  # (n-1)/n
                check(res["count"] * 4 == res["bytes"] and res["in_place"] == bool(inplace),
                      "message size per rank, in place recorded")
                moved = 2 * res["bytes"] / (res["latency_us"]["avg"] * 1e-6) / 1e9  # x n blocks
                check(abs(res["algbw_GBps"] - moved) <= 1e-9 + 1e-9 * moved,
                      f"{bench}: algbw counts the n blocks")
                check((bench == "reduce_scatter") == ("op" in res), "op only for reductions")


@case
def gather_scatter_every_dtype_and_op(env):
    for dtype in ["char", "double", "half"]:
        env.ok(2, "allgather", ["-m", "2:4K", "-c", *FAST, "--dtype", dtype])
    for i, (dtype, op) in enumerate((d, o) for d in REDUCIBLE for o in OPS):
        inplace = ["-l"] if i % 2 else []  # in and out of place alternately
        env.ok(2, "reduce_scatter", ["-m", "1:256", "-c", *FAST, "--dtype", dtype, "--op", op,
                                     *inplace])
    for dtype in ("half", "bfloat16"):  # the engine reduces 16-bit floats
        env.ok(2, "reduce_scatter", ["--backend", "engine", "-m", "2:64K", "-c", *FAST,
                                     "--dtype", dtype, "--op", "sum", "-l"])


@case
def gather_scatter_three_and_four_ranks_yield(env):
    for np, inplace in ((3, []), (4, ["-l"])):
        for backend in ("mpi", "engine"):
            for bench in GATHER_SCATTER:
                out = env.path(f"{bench}{np}{backend}.json")
                r = env.ok(np, bench, ["--backend", backend, "-m", "4:4K", "-c", *FAST, "-J",
                                       out, *inplace], timeout=120)
                check("wait: yield" in r.out, "yield with more ranks than cores")
                for res in load_json(out)["results"]:
                    check_collective(res, np, (np - 1) / np)


@case('-asan')
def gather_scatter_engine_every_algorithm(env):
    """--algo all at 2 ranks (16 KiB ring segments: several per block at the top size) and
    at 3 (yield; the power-of-two algorithms are skipped there)."""
    for bench in GATHER_SCATTER:
        for np, sizes in ((2, "4:64K"), (3, "4:16K")):
            for inplace in ([], ["-l"]):
                out = env.path(f"{bench}{np}.json")
                env.ok(np, bench, ["--backend", "engine", "--algo", "all", "-m", sizes,
                                       "-c", *FAST, "-J", out, *inplace], timeout=120,
                       env={"CB_RING_SEGMENT_BYTES": "16K"})
                doc = load_json(out)
                seen = {res["algo"] for res in doc["results"]}
                want = ALGOS[bench] if np == 2 else ALGOS[bench] - {"recursive_doubling",
                                                                    "recursive_halving"}
                check(seen == want, f"{bench} np {np}: measured {seen}, expected {want}")
                check(all(res["validation"]["passed"] for res in doc["results"]), "validation")
        names = {a["name"] for a in doc["backend"]["algorithms"] if a["coll"] == bench}
        check(names == ALGOS[bench], f"{bench}: backend lists {names}")
    r = env.run(3, "allgather", ["--backend", "engine", "--algo", "recursive_doubling",
                                 "-m", "8:8"], timeout=60)
    check(r.rc == 2 and "needs a power-of-two rank count" in r.err, str(r))


@case('tsan')
def gather_scatter_nonblocking(env):
    for bench in ("iallgather", "ireduce_scatter"):
        for backend, np, extra in (("mpi", 2, ["-t", "4"]), ("engine", 2, ["-t", "4"]),
                                   ("engine", 2, ["--progress-thread", "-t", "0", "-l"]),
                                   ("engine", 4, ["-t", "2", "-l"])):
            out = env.path(f"{bench}.json")
            env.ok(np, bench, ["--backend", backend, "-m", "4:64K" if np == 2 else "4:1K", "-c",
                               *FAST, "-J", out, *extra], timeout=120)
            doc = load_json(out)
            check(doc["status"] == "complete", f"{bench} {backend} {extra}")
            for res in doc["results"]:
                check_overlap(res)


@case
def gather_scatter_validation_failure_is_reported(env):
    for bench in ("allgather", "ireduce_scatter"):
        for backend in ("mpi", "engine"):
            r = env.run(2, bench, ["--backend", backend, "-m", "8:16", "-i", "2", "-c"],
                        env={"CB_TEST_FAULT": "corrupt"}, timeout=30)
            check(r.rc == 1 and "DATA VALIDATION ERROR" in r.err, f"{bench} {backend}: {r}")
