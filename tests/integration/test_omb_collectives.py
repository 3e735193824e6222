"""OMB's other collectives: gather, scatter, their v forms, allgatherv, reduce_scatterv
(MPI_Reduce_scatter), alltoallw, every non-blocking form (ibarrier included) and the
persistent forms (MPI_<Coll>_init + MPI_Start). Each validates every element (-c) on the
MPI backend at 2, 3 and 4 ranks, in and out of place where MPI defines it, at fixed and
rotating roots, with skewed counts, and with a corrupted result -c must catch."""
from cbtest import case, check, check_document, doubling, load_json
from test_collectives import check_collective

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md

BLOCKING = ["gather", "gatherv", "scatter", "scatterv", "allgatherv", "reduce_scatterv",
            "alltoallw"]
NONBLOCKING = ["i" + b for b in BLOCKING] + ["ibarrier"]
PERSISTENT = [b + "_persistent" for b in
              ["allreduce", "bcast", "alltoall", "reduce", "barrier", "alltoallv", "allgather",
               "reduce_scatter", *BLOCKING]]
ROOTED = {"gather", "gatherv", "scatter", "scatterv"}
NO_IN_PLACE = {"alltoallw", "alltoallv"}
VARYING = {"gatherv", "scatterv", "allgatherv", "reduce_scatterv", "alltoallw"}
FAST = ["-i", "3", "-x", "1"]
# MPICH 4.0's persistent allgather, gather and scatter repeat the first start's data at
# later starts (scatter hangs on 3 ranks); the MPI backend refuses them (exit 2, saying so).
STALE = "deliver the first start's data again"


def run_ok(env, np, bench, args, **kw):
    """Runs and requires success, or for a persistent form the library's probed defect;
    returns the run, None when refused."""
    r = env.run(np, bench, args, **kw)
    if bench.endswith("_persistent") and r.rc == 2 and STALE in r.err:
        check(base(bench) in ("allgather", "gather", "scatter"), f"{bench}: refused: {r}")
        return None
    check(r.rc == 0, f"cb_{bench} {' '.join(map(str, args))} failed: {r}")
    return r


def base(bench):
    return bench.removeprefix("i").removesuffix("_persistent") if bench != "ibarrier" else "barrier"


def sizeless(bench):
    return base(bench) == "barrier"


@case
def omb_collectives_json_two_ranks(env):
    for bench in BLOCKING + PERSISTENT:
        out = env.path(f"{bench}.json")
        if sizeless(bench):
            env.ok(2, bench, ["-i", "10", "-J", out])
            check(load_json(out)["results"][0]["bytes"] == 0, f"{bench}: one sizeless record")
            continue
        if not run_ok(env, 2, bench, ["-m", "4:16K", "-c", "-i", "10", "-x", "2", "-J", out]):
            continue
        doc = load_json(out)
        check_document(doc, bench, 2, doubling(4, 16384))
        for res in doc["results"]:
            check_collective(res, 2, 1.0 if base(bench) in ("allreduce", "bcast", "reduce") else 0.5)
            check(("persistent_init_us" in res) == bench.endswith("_persistent"),
                  f"{bench}: persistent_init_us only for persistent forms")


@case
def omb_collectives_nonblocking_two_ranks(env):
    for bench in NONBLOCKING:
        args = ["-i", "5"] if sizeless(bench) else ["-m", "4:4K", "-c", *FAST, "-t", "2"]
        env.ok(2, bench, args)


@case('-asan')
def omb_collectives_every_form_three_and_four_ranks(env):
    """Odd and even rank counts (yield: more ranks than cores), every root and skewed
    counts for the v forms; out of place at 3 ranks, in place (where the form has it) at 4:
    each form meets both rank parities and both placements, one launch per form and count
    (the 2-rank cases run both placements)."""
    for np in (3, 4):
        for bench in BLOCKING + NONBLOCKING + PERSISTENT:
            if sizeless(bench):
                env.ok(np, bench, ["-i", "3", "--wait", "yield"])
                continue
            b = base(bench)
            places = [[]] if b in NO_IN_PLACE or np == 3 else [["-l"]]
            for inplace in places:
                args = ["-m", "4:2K", "-c", *FAST, "--wait", "yield", *inplace]
                if b in ROOTED:
                    args += ["-k", "rotate"]
                if b in VARYING and np == 3:
                    args += ["--counts", "zipf:1.5,3"]
                elif b in VARYING:
                    args += ["--counts", "random:5"]
                run_ok(env, np, bench, args, timeout=180)


@case("other_mpis")
def omb_collectives_persistent_gather_scatter(env):
    """The persistent forms that run_ok lets MPICH 4.0 refuse (allgather, gather, scatter),
    validated (-c, 3 starts per size) at 2 and 3 ranks, in and out of place, at rotating
    roots on a library that has them right (Open MPI 5, MPICH 5: the other MPIs' stage);
    on MPICH 4.0 the refusal (STALE), and only there: a refusal elsewhere fails, and so
    does a run on MPICH 4.0 (its later starts deliver the first start's data again)."""
    probe = env.path("library.json")
    env.ok(2, "barrier", ["-i", "1", "-J", probe])
    library = load_json(probe)["environment"]["mpi"]["library"]
    defective = "MPICH Version: 4.0" in library  # src/core/mpi_compat.hpp's test
    for np in (2, 3):
        for bench in ("allgather_persistent", "gather_persistent", "scatter_persistent"):
            for inplace in ([], ["-l"]):
                out = env.path(f"{bench}.{np}{''.join(inplace)}.json")
                rooted = ["-k", "rotate"] if base(bench) in ROOTED else []
                args = ["-m", "4:4K", "-c", *FAST, "--wait", "yield", *inplace, *rooted,
                        "-J", out]
                r = env.run(np, bench, args, timeout=180)
                what = f"cb_{bench} {' '.join(args)} at {np} ranks on {library[:40]!r}"
                if defective:
                    check(r.rc == 2 and STALE in r.err, f"{what}: expected the refusal: {r}")
                    continue
                check(r.rc == 0, f"{what}: expected validated results: {r}")
                results = load_json(out)["results"]
                check([x["bytes"] for x in results] == doubling(4, 4096), f"{what}: sizes")
                bad = [x["bytes"] for x in results if not x["validation"]["passed"]]
                check(not bad, f"{what}: not validated at {bad} B")


@case('-asan')
def omb_collectives_dtypes_ops_and_roots(env):
    for dtype in ("char", "int64", "double", "half"):
        for bench in ("gather", "scatterv", "allgatherv", "alltoallw"):
            env.ok(2, bench, ["-m", "2:1K", "-c", *FAST, "--dtype", dtype])
    for op in ("sum", "prod", "max", "min"):
        for inplace in ([], ["-l"]):
            env.ok(2, "reduce_scatterv", ["-m", "8:1K", "-c", *FAST, "--dtype", "int32", "--op",
                                          op, "--counts", "zipf:1.0", *inplace])
    for root in ("0", "1"):
        for bench in ("gatherv_persistent", "iscatter", "gatherv", "gather_persistent"):
            run_ok(env, 2, bench, ["-m", "4:1K", "-c", *FAST, "-k", root])


@case
def omb_collectives_validation_catches_corruption(env):
    """-c is not a formality: a flipped byte in the result fails every one of them."""
    for bench in ("gather", "scatterv", "allgatherv", "reduce_scatterv", "alltoallw",
                  "igatherv", "scatterv_persistent"):
        r = env.run(2, bench, ["-m", "64:64", "-c", *FAST],
                    env={"CB_TEST_FAULT": "corrupt"})
        check(r.rc == 1 and "DATA VALIDATION ERROR" in r.err,
              f"{bench}: corruption not reported: {r}")


@case
def omb_collectives_bad_input(env):
    for bench, args, says in [
        ("alltoallw", ["-l"], "no in-place form"),
        ("gather", ["-k", "2"], "out of range"),
        ("allgather_persistent", ["--counts", "zipf:1"], "--counts"),
    ]:
        r = env.run(2, bench, ["-m", "4:64", *args])
        check(r.rc == 2 and says in r.err, f"{bench} {args}: expected exit 2 naming {says}: {r}")


NEIGHBOR = ["neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
            "neighbor_alltoallv", "neighbor_alltoallw"]


@case('-asan')
def omb_neighbor_collectives(env):
    """MPI_Neighbor_* on -N's Cartesian grids: 1-3 dimensions, radius 1 and 2, blocking and
    non-blocking, 2-4 ranks, uniform and skewed counts, every element checked; the JSON
    records the topology and algbw counts what the average rank receives."""
    for np, topo in ((2, "cart:1:1"), (3, "cart:1:2"), (4, "cart:2:1"), (4, "cart:3:1")):
        for bench in NEIGHBOR + ["i" + b for b in NEIGHBOR]:
            args = ["-m", "4:1K", "-c", *FAST, "-N", topo]
            if np > 2:
                args += ["--wait", "yield"]
            if bench.endswith(("v", "w")):
                args += ["--counts", "random:3" if np % 2 else "zipf:1.2"]
            env.ok(np, bench, args, timeout=120)
    out = env.path("nb.json")
    env.ok(4, "neighbor_alltoall", ["-m", "64:64", "-c", *FAST, "-N", "cart:2:1", "--wait",
                                    "yield", "-J", out])
    res = load_json(out)["results"][0]
    t = res["topology"]
    check(t["spec"] == "cart:2:1" and t["extents"] == [2, 2] and t["mean_degree"] == 3,
          f"a 2x2 periodic grid, OMB's neighborhood: three distinct neighbors each: {t}")
    moved = 64 * 3 / (res["latency_us"]["avg"] * 1e-6) / 1e9
    check(abs(res["algbw_GBps"] - moved) <= 1e-9 + 1e-9 * moved, "algbw: size x mean degree")
    for bench, args, says in [("neighbor_alltoall", ["-N", "ring"], "cart:DIMS:RADIUS"),
                              ("neighbor_alltoall", ["-N", "graph:/nonexistent"], "cannot open"),
                              ("neighbor_alltoall", ["-N", "cart:9:1"], "DIMS"),
                              ("allreduce", ["-N", "cart:2:1"], "no neighborhood collective"),
                              ("neighbor_allgather", ["-l"], "no in-place form")]:
        r = env.run(2, bench, ["-m", "4:64", *args])
        check(r.rc == 2 and says in r.err, f"{bench} {args}: expected exit 2 naming {says}: {r}")


@case
def omb_neighbor_graph_topology(env):
    """-N graph:FILE (OMB's adjacency list, "SOURCE,DESTINATION" a line): unequal in- and
    out-degrees, every form validated at 3 ranks; a file naming a rank the run lacks, a
    self-loop and a malformed line are refused by name."""
    edges = env.path("edges.txt")
    with open(edges, "w") as f:
        f.write("# a directed ring and a chord\n0,1\n1,2\n2,0\n0,2\n")
    # Not [i]neighbor_alltoallw: on this graph MPICH 4.0.2 leaves a block of rank 2 (in-degree
    # 2, out-degree 1) unwritten at some sizes and not others, changing with the iteration
    # count and with MPIR_CVAR_INEIGHBOR_ALLTOALLW_INTRA_ALGORITHM; -c reports it (see
    # docs/benchmarks.md). neighbor_alltoallv, the same exchange with element displacements
    # and one datatype, passes every time.
    for bench in [b for b in NEIGHBOR if not b.endswith("w")]:
        for form in (bench, "i" + bench):
            args = ["-m", "4:256", "-c", *FAST, "-N", "graph:" + edges, "--wait", "yield"]
            if bench.endswith("v"):
                args += ["--counts", "random:5"]
            env.ok(3, form, args, timeout=120)
    out = env.path("graph.json")
    env.ok(3, "neighbor_alltoall", ["-m", "64:64", "-c", *FAST, "-N", "graph:" + edges,
                                    "--wait", "yield", "-J", out])
    t = load_json(out)["results"][0]["topology"]
    check(t["spec"] == "graph:" + edges and t["extents"] == [] and t["max_degree"] == 2
          and abs(t["mean_degree"] - 4 / 3) < 1e-9, f"graph topology recorded: {t}")
    for text, says in (("0,1\n1,2\n", "names rank 2"), ("0,0\n", "self-loop"),
                       ("0 1\n", "line 1")):
        with open(edges, "w") as f:
            f.write(text)
        r = env.run(2, "neighbor_alltoall", ["-m", "4:64", "-N", "graph:" + edges])
        check(r.rc == 2 and says in r.err, f"graph {text!r}: expected exit 2 naming {says}: {r}")


@case
def omb_dtype_sweeps(env):
    """-T all (OMB's: char, int, float) and -T lists: one validated sweep per type in one
    run, a table per type, every record naming its type."""
    out = env.path("all.json")
    r = env.ok(2, "allreduce", ["-m", "4:64", "-T", "all", "-c", *FAST, "-J", out])
    check(r.out.count("# Datatype: ") == 3, f"a table per type: {r.out}")
    doc = load_json(out)
    check(doc["options"]["dtypes"] == ["char", "int32", "float"], f"dtypes: {doc['options']}")
    seen = [(res["dtype"], res["bytes"]) for res in doc["results"]]
    want = [(d, b) for d in ("char", "int32", "float") for b in doubling(4, 64)]
    check(seen == want, f"one sweep per type: {seen}")
    check(all(res["validation"]["passed"] for res in doc["results"]), "all validated")
    out = env.path("list.json")
    env.ok(2, "ialltoall", ["-m", "8:32", "-T", "double,MPI_CHAR", "-c", *FAST, "-J", out])
    check([res["dtype"] for res in load_json(out)["results"]] == ["double"] * 3 + ["char"] * 3,
          "a -T list in its order")
    for args, says in ((["-T", "float,nope"], "nope"), (["-T", "float,float"], "twice")):
        r = env.run(2, "allreduce", ["-m", "4:64", *args])
        check(r.rc == 2 and says in r.err, f"{args}: expected exit 2 naming {says}: {r}")


DDT_BENCHES = ["bcast", "gather", "scatter", "allgather", "alltoall", "neighbor_allgather",
               "neighbor_alltoall", "ialltoall", "igather", "bcast_persistent"]


@case('-asan')
def omb_derived_datatypes(env):
    """-D cont|vect|indx: every block travels as one element of the derived type; -c checks
    that the elements the type picks arrived (against the plain type's result) and the
    others were left alone; the JSON and the table give OMB's Transmit Size."""
    indx = env.path("indx.txt")
    with open(indx, "w") as f:
        f.write("# displacement,blocklen\n1,2\n5,1\n")
    for bench in DDT_BENCHES:
        for ddt in ("cont", "vect:4:2", "indx:" + indx):
            run_ok(env, 2, bench, ["-m", "4:1K", "-T", "char", "-D", ddt, "-c", *FAST])
    for ddt, moved in (("vect:4:2", 8), ("indx:" + indx, 3), ("cont", 16)):
        out = env.path("ddt.json")
        r = env.ok(2, "alltoall", ["-m", "16:16", "-T", "char", "-D", ddt, "-c", *FAST,
                                   "-J", out])
        res = load_json(out)["results"][0]
        check(res["ddt"] == {"spec": ddt, "transmit_bytes": moved}, f"{ddt}: {res.get('ddt')}")
        check("Transmit Size" in r.out, "OMB's Transmit Size column")
    env.ok(4, "alltoall", ["-m", "4:256", "-T", "int", "-D", "vect:3:1", "-c", *FAST,
                           "--wait", "yield"])
    r = env.run(2, "alltoall", ["-m", "64:64", "-T", "char", "-D", "vect:4:2", "-c", *FAST],
                env={"CB_TEST_FAULT": "corrupt"})
    check(r.rc == 1 and "DATA VALIDATION ERROR" in r.err, f"-D: corruption caught: {r}")
    for bench, args, says in [
        ("allreduce", ["-D", "cont"], "takes no derived datatype"),
        ("alltoallv", ["-D", "cont"], "takes no derived datatype"),
        ("alltoall", ["-D", "cont", "--backend", "engine"], "only the mpi backend"),
        ("alltoall", ["-D", "vect:2:4"], "may not exceed STRIDE"),
        ("alltoall", ["-D", "indx:/nonexistent"], "cannot open"),
        ("alltoall", ["-D", "cont", "-T", "all"], "one -T type"),
    ]:
        r = env.run(2, bench, ["-m", "4:64", *args])
        check(r.rc == 2 and says in r.err, f"{bench} {args}: expected exit 2 naming {says}: {r}")
