"""The engine backend through the benchmark executables: --algo all, forced algorithms,
the environment override, tuning tables, pt2pt over the engine transport, errors."""
import json

from cbtest import case, check, check_document, doubling, load_json

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md

ALGOS = {  # what --algo all measures with two ranks on one node (no hierarchical); "mpi":
    # the MPI library's own collective; "small" the small-message slots (up to 16 KiB)
    "allreduce": {"recursive_doubling", "rabenseifner", "ring", "shm_flat", "shm", "small",
                  "mpi"},
    "bcast": {"binomial", "scatter_allgather", "chain", "shm", "small", "mpi"},
    "alltoall": {"pairwise", "bruck", "linear", "shm", "small", "mpi"},
}
# Listed but not measured here: hierarchical needs two nodes, cma private buffers, the
# ipc ones device buffers (tests/integration/test_gpu.py measures those on a GPU).
LISTED = {"allreduce": ALGOS["allreduce"] | {"hierarchical", "cma", "ipc_oneshot", "ipc_twoshot"},
          "bcast": ALGOS["bcast"] | {"hierarchical", "cma", "ipc"},
          "alltoall": ALGOS["alltoall"] | {"ipc"}}


@case
def engine_algo_all_records_each_algorithm(env):
    for coll, algos in ALGOS.items():
        out = env.path(f"{coll}.json")
        r = env.ok(2, coll, ["--backend", "engine", "--algo", "all", "-m", "4:64K", "-c",
                             "-i", "5", "-x", "1", "-J", out])
        check("Algorithm" in r.out, f"{coll}: algorithm column:\n{r.out}")
        doc = load_json(out)
        check(doc["backend"]["name"] == "engine" and doc["status"] == "complete", coll)
        seen = {res["algo"] for res in doc["results"]}
        check(seen == algos, f"{coll}: algorithms measured {seen}, expected {algos}")
        check(all(res["validation"]["passed"] for res in doc["results"]), f"{coll}: validation")
        names = {a["name"] for a in doc["backend"]["algorithms"] if a["coll"] == coll}
        check(names == LISTED[coll], f"{coll}: backend lists {names}")
        check(doc["backend"]["tuning"]["rules"], "tuning table recorded")


@case('other_mpis')
def engine_selection_follows_the_table(env):
    table = {"rules": [
        {"coll": "allreduce", "mem": "host", "max_bytes": 64, "algo": "ring"},
        {"coll": "allreduce", "mem": "host", "max_bytes": None, "algo": "rabenseifner"}]}
    path = env.path("table.json")
    with open(path, "w") as f:
        json.dump(table, f)
    out = env.path("sel.json")
    env.ok(2, "allreduce", ["--backend", "engine", "-m", "8:1K", "-c", "-i", "3", "-J", out],
           env={"CB_TUNING_FILE": path})
    algos = {r["bytes"]: r["algo"] for r in load_json(out)["results"]}
    check(all(a == "ring" for b, a in algos.items() if b <= 64), f"ring up to 64 B: {algos}")
    check(all(a == "rabenseifner" for b, a in algos.items() if b > 64), f"then rabenseifner: {algos}")


@case
def engine_environment_forces_an_algorithm(env):
    out = env.path("env.json")
    env.ok(2, "bcast", ["--backend", "engine", "-m", "4:4K", "-c", "-i", "3", "-J", out],
           env={"CB_BCAST_ALGO": "chain"})
    doc = load_json(out)
    check({r["algo"] for r in doc["results"]} == {"chain"}, "CB_BCAST_ALGO=chain")
    # the document names the setting, so that it is never read as the table's choice
    check(doc["environment"].get("cb_variables", {}).get("CB_BCAST_ALGO") == "chain",
          f"environment.cb_variables: {doc['environment'].get('cb_variables')}")


@case
def engine_forced_algorithm_that_cannot_run(env):
    # ring needs one element per rank: 4 B of float is one element for two ranks.
    r = env.ok(2, "allreduce", ["--backend", "engine", "--algo", "ring", "-m", "4:64", "-i", "2"])
    check("skipped ring at sizes 4: ring needs at least one element per rank" in r.out, r.out)
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "ring", "-m", "4:4"], timeout=30)
    check(r.rc == 2 and "ring needs at least one element per rank" in r.err, str(r))
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "binomial", "-m", "8"], timeout=30)
    check(r.rc == 2 and "unknown allreduce algorithm 'binomial'" in r.err and "ring" in r.err, str(r))


@case
def engine_bad_tuning_table(env):
    path = env.path("bad.json")
    with open(path, "w") as f:
        json.dump({"rules": [{"coll": "allreduce", "mem": "host", "algo": "warp"}]}, f)
    r = env.run(2, "allreduce", ["--backend", "engine", "-m", "8"], env={"CB_TUNING_FILE": path},
                timeout=30)
    check(r.rc == 2 and "rules[0]" in r.err and "warp" in r.err, str(r))
    r = env.run(2, "allreduce", ["--backend", "engine", "-m", "8"],
                env={"CB_TUNING_FILE": env.path("missing.json")}, timeout=30)
    check(r.rc == 2 and "CB_TUNING_FILE" in r.err, str(r))


@case
def engine_bad_environment_setting(env):
    args = ["--backend", "engine", "-m", "8:8", "-i", "2", "-x", "1"]
    r = env.run(2, "allreduce", args, env={"CB_SHM_HEAP_BYTES": "8Q"}, timeout=30)
    check(r.rc == 2 and "CB_SHM_HEAP_BYTES=8Q" in r.err and "256K" in r.err, str(r))
    check(r.err.count("CB_SHM_HEAP_BYTES") == 1, f"one message, not one per rank: {r}")
    env.ok(2, "allreduce", args, env={"CB_SHM_HEAP_BYTES": "64M"}, timeout=60)

@case('other_mpis')
def engine_pt2pt_over_its_transport(env):
    for bench in ("latency", "bw", "bibw", "mbw_mr"):
        out = env.path(f"{bench}.json")
        env.ok(2, bench, ["--backend", "engine", "-m", "1:64K", "-c", "-i", "20", "-J", out])
        doc = load_json(out)
        check_document(doc, bench, 2, doubling(1, 65536))
        check(all(r["validation"]["passed"] for r in doc["results"]), bench)


@case('other_mpis')
def engine_same_bits_on_every_rank(env):
    """Issue 25: every rank gets the same bits from every engine reduction, for every
    algorithm, small and large, also with inputs whose sum depends on the order of the
    contributions (-c compares the ranks' bits): 3 ranks in yield mode, where ranks that
    reduce in different orders differ."""
    for bench, dtype, op, sizes in (("allreduce", "double", "sum", "8:4M"),
                                    ("allreduce", "float", "prod", "8:1M"),
                                    ("iallreduce", "float", "sum", "8:256K")):
        out = env.path(f"{bench}-{dtype}-{op}.json")
        r = env.run(3, bench, ["--backend", "engine", "--algo", "all", "-m", sizes,
                               "--stepfactor", "8", "-c", "-i", "2", "-x", "1", "--wait",
                               "yield", "--dtype", dtype, "--op", op, "-J", out], timeout=90)
        doc = load_json(out)
        bad = [(res["bytes"], res["algo"], res["validation"]) for res in doc["results"]
               if not res["validation"]["passed"]]
        check(r.rc == 0 and not bad,
              f"{bench} {dtype} {op}: ranks differ (bytes, algorithm, validation): {bad}\n{r}")
        for res in doc["results"]:
            v = res["validation"]
            check(v["bits_compared"] and v["order_check"], f"{bench}: compared: {v}")


@case
def engine_small_path(env):
    """Issue 30: the small-message slots (--algo small) of every collective that has them,
    at 3 and 8 ranks (yield), in and out of place, validated (-c): allreduce, allgather and
    bcast also compare every rank's result bits, with order-sensitive float sums; every
    size up to the 16 KiB slot ran on small, the larger ones were refused and skipped.
    engine_check covers every dtype and op at 1-8 ranks; at 8 ranks, five of them here."""
    for np in (3, 8):
        for bench, extra in (("allreduce", ["--dtype", "double", "--op", "sum"]),
                             ("reduce_scatter", ["--dtype", "half", "--op", "sum", "-l"]),
                             ("bcast", ["-k", str(np - 1)]), ("alltoall", []), ("barrier", []),
                             *([] if np == 8 else [
                                 ("allreduce", ["--dtype", "float", "--op", "sum", "-l"]),
                                 ("reduce", ["--dtype", "bfloat16", "--op", "max", "-k", "1"]),
                                 ("allgather", ["-l"]), ("iallreduce", []),
                                 ("alltoallv", ["--counts", "zipf:1.5,3"])])):
            out = env.path(f"small-{np}-{bench}-{len(extra)}.json")
            sized = bench != "barrier"
            r = env.run(np, bench, ["--backend", "engine", "--algo", "small", "-c", "-i", "3",
                                    "-x", "1", "--wait", "yield", "-J", out, *extra,
                                    *(["-m", "4:32K"] if sized else [])], timeout=120)
            check(r.rc == 0, f"{bench} {extra} at {np} ranks: {r}")
            doc = load_json(out)
            results = doc["results"]
            check(results and all(res["algo"] == "small" and res["validation"]["passed"]
                                  for res in results), f"{bench} {extra} at {np}: {results}")
            if not sized:
                continue
            largest = max(res["bytes"] for res in results)
            check(largest >= 16384 // (np if bench in ("alltoall", "alltoallv", "reduce_scatter") else 1) // 2
                  and largest <= 16384, f"{bench} at {np}: sizes run {largest}")
            if bench in ("allreduce", "allgather", "bcast"):
                check(all(res["validation"]["bits_compared"] for res in results),
                      f"{bench}: bits not compared: {results[0]['validation']}")


@case('other_mpis', 'tsan')
def engine_nonblocking_and_yield(env):
    for bench in ("iallreduce", "ibcast", "ialltoall"):
        out = env.path(f"{bench}.json")
        env.ok(4, bench, ["--backend", "engine", "-m", "4:16K", "-c", "-i", "3", "-x", "1",
                          "-t", "3", "-J", out], timeout=120)
        for res in load_json(out)["results"]:
            check(0 <= res["overlap_pct"] <= 100 and res["validation"]["passed"], bench)


@case('other_mpis', 'tsan')
def engine_progress_thread(env):
    for bench in ("iallreduce", "ialltoall"):
        out = env.path(f"{bench}.json")
        env.ok(2, bench, ["--backend", "engine", "--progress-thread", "-m", "4:256K", "-c",
                          "-i", "5", "-x", "1", "-J", out])
        doc = load_json(out)
        check(doc["backend"]["progress_thread"] is True and doc["options"]["progress_thread"],
              "progress thread recorded")
        for res in doc["results"]:
            check(0 <= res["overlap_pct"] <= 100 and res["validation"]["passed"], bench)
    env.ok(2, "allreduce", ["--backend", "engine", "--progress-thread", "-m", "4:64K", "-c",
                            "-i", "5"])
    r = env.run(2, "iallreduce", ["--progress-thread", "-m", "8"], timeout=30)
    check(r.rc == 2 and "--progress-thread is an engine option" in r.err, str(r))
