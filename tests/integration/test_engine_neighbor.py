"""The engine's neighborhood collectives (cb_[i]neighbor_allgather[v], cb_[i]neighbor_alltoall
[v|w]): both algorithms (exchange, mpi) validate every element (-c) at 2, 3 and 4 ranks
(yield above 2) on Cartesian grids of 1 and 2 dimensions at radius 1 and 2 and on a
graph of unequal in- and out-degrees, blocking and non-blocking, with skewed and random
counts for the v and w forms; over shared memory,
over MPI point to point (CB_ENGINE_SHM=0), over both at once (two virtual nodes) and on
private buffers; the default choice is exchange; MPI's missing in-place form is refused;
a corrupted result is caught."""
from cbtest import case, check, check_corruption_caught, engine_algo_all, load_json

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md
# Under ASan (-asan below): 2 ranks and the transports; the 3-4 rank and graph sweeps run the
# same engine code (and the engine matrix at 3 ranks runs under ASan too).

COLLS = ["neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
         "neighbor_alltoallv", "neighbor_alltoallw"]
BENCHES = COLLS + ["i" + c for c in COLLS]
ALGOS = {"exchange", "mpi"}
# 1-D and 2-D, radius 1 and 2: on a short dimension +r and -r reach the same rank (listed
# once), and at radius 2 a 1-D ring of 3 or 4 reaches every other rank; a 2-D grid's
# neighbors are the ranks within RADIUS in every dimension (OMB's), diagonals included.
TOPOLOGIES = ["cart:1:1", "cart:1:2", "cart:2:1", "cart:2:2"]
FAST = ["-i", "3", "-x", "1"]


def counts_for(bench, i):
    """--counts for the v and w forms (alternating skewed and random), none otherwise."""
    if not bench.endswith(("v", "w")):
        return []
    return ["--counts", "zipf:1.5,3" if i % 2 == 0 else "random:5"]


def every_form(env, np, sizes, topologies=TOPOLOGIES):
    for i, topology in enumerate(topologies):
        for bench in BENCHES:
            args = ["-m", sizes, "-N", topology, *counts_for(bench, i)]
            doc = engine_algo_all(env, np, bench, args, env.path(f"{bench}.{np}.json"), ALGOS)
            got = doc["results"][0]["topology"]["spec"]
            check(got == topology, f"{bench}: ran on {got}, asked {topology}")


@case('-asan')
def engine_neighbor_two_ranks(env):
    """Both neighbors of a 1-D ring of 2 are the same rank: one edge each way."""
    every_form(env, 2, "4:64K")


@case('-asan')
def engine_neighbor_three_ranks(env):
    every_form(env, 3, "4:16K")


@case('-asan')
def engine_neighbor_four_ranks_1d(env):
    """A ring of 4: two neighbors at radius 1, all three others at radius 2."""
    every_form(env, 4, "4:16K", TOPOLOGIES[:2])


@case('-asan')
def engine_neighbor_four_ranks_2d(env):
    """A 2x2 grid: each dimension's +1 and -1 are one rank, the three others neighbors."""
    every_form(env, 4, "4:16K", TOPOLOGIES[2:])


@case('-asan')
def engine_neighbor_graph_topology(env):
    """-N graph:FILE on the engine, the lists taken as they come: a directed ring and a
    chord at 3 ranks (rank 0 sends twice, rank 2 receives twice). The mpi algorithm runs
    all but [i]neighbor_alltoallw, whose MPICH 4.0.2 form leaves a block unwritten on such
    a graph (docs/benchmarks.md); exchange runs all five."""
    edges = env.path("edges.txt")
    with open(edges, "w") as f:
        f.write("# a directed ring and a chord\n0,1\n1,2\n2,0\n0,2\n")
    for i, bench in enumerate(BENCHES):
        args = ["-m", "4:64K", "-N", "graph:" + edges, *counts_for(bench, i)]
        out = env.path(f"{bench}.graph.json")
        if not bench.endswith("w"):
            engine_algo_all(env, 3, bench, args, out, ALGOS)
            continue
        env.ok(3, bench, ["--backend", "engine", "--algo", "exchange", "-c", *FAST, "--wait",
                          "yield", *args, "-J", out], timeout=240)
        bad = [r["bytes"] for r in load_json(out)["results"] if not r["validation"]["passed"]]
        check(not bad, f"{bench} exchange on a graph: not passed at {bad}")


@case
def engine_neighbor_transports(env):
    """Every edge over MPI point to point (CB_ENGINE_SHM=0); two virtual nodes of two ranks
    (CB_RANKS_PER_NODE=2: shared memory to one neighbor, MPI to the others); private
    buffers (--alloc plain: the shared-memory transport copies through its rings or reads
    the sender's memory by cross-memory attach) up to sizes past its 8 KiB eager limit."""
    for name, np, topology, extra, run_env in [
            ("noshm", 3, "cart:1:1", [], {"CB_ENGINE_SHM": "0"}),
            ("nodes", 4, "cart:2:1", [], {"CB_RANKS_PER_NODE": "2"}),
            ("plain", 2, "cart:1:1", ["--alloc", "plain"], None)]:
        for i, bench in enumerate(["neighbor_alltoallv", "ineighbor_allgather",
                                   "neighbor_alltoallw", "ineighbor_allgatherv"]):
            args = ["-m", "4:1M", "-N", topology, *extra, *counts_for(bench, i)]
            engine_algo_all(env, np, bench, args, env.path(f"{bench}.{name}.json"), ALGOS,
                            run_env=run_env)


@case
def engine_neighbor_default_and_refusals(env):
    """Without --algo the tuning table picks exchange, shared memory on or off; -l is
    refused as on MPI (MPI defines no in-place neighborhood collective)."""
    for bench in ("neighbor_allgather", "ineighbor_alltoallv"):
        for shm in ("1", "0"):
            out = env.path(f"{bench}.default.{shm}.json")
            env.ok(2, bench, ["--backend", "engine", "-c", *FAST, "-m", "4:64K", "-J", out],
                   env={"CB_ENGINE_SHM": shm})
            chosen = {r["algo"] for r in load_json(out)["results"]}
            check(chosen == {"exchange"}, f"{bench} CB_ENGINE_SHM={shm}: chose {chosen}")
    r = env.run(2, "neighbor_alltoall", ["--backend", "engine", "-m", "4:64", "-l"])
    check(r.rc == 2 and "no in-place form" in r.err, f"-l on the engine: expected exit 2: {r}")


@case
def engine_neighbor_validation_catches_corruption(env):
    """-c is not a formality on the engine either: a flipped byte fails each algorithm."""
    for bench in ("neighbor_allgatherv", "ineighbor_alltoall", "neighbor_alltoallw"):
        for algo in sorted(ALGOS):
            check_corruption_caught(env, bench, ["--backend", "engine", "--algo", algo])
