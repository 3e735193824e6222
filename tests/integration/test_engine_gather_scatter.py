"""The engine's gather, scatter and their v forms (and allgatherv): every algorithm
(binomial, shm, mpi) validates every element (-c, which also compares allgatherv's result
bits across ranks) at 2, 3 and 4 ranks (yield above 2), in and out of place, at a fixed and
a rotating root, with skewed and random counts for the v forms; the default choice follows
the tuning table (shm on one node; without shared memory the private-buffer rules: the
library at small gathers and scatters, binomial above); a corrupted result is caught."""
import json

from cbtest import (TUNING_TABLE, case, check, check_corruption_caught, engine_algo_all,
                    load_json)

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md
# Under ASan (-asan below): 2 ranks; 3 and 4 run the same code (the engine matrix at 3 ranks
# runs under ASan too).

COLLS = ["gather", "scatter", "gatherv", "scatterv", "allgatherv"]
ROOTED = {"gather", "scatter", "gatherv", "scatterv"}
VARYING = {"gatherv", "scatterv", "allgatherv"}
ALGOS = {"binomial", "shm", "mpi"}
FAST = ["-i", "3", "-x", "1"]
TUNING = TUNING_TABLE


def algo_all(env, np, coll, args, out):
    engine_algo_all(env, np, coll, args, out, ALGOS)


def every_form(env, np, sizes):
    for coll in COLLS:
        roots = [["-k", "rotate"], ["-k", str(np - 1)]] if coll in ROOTED else [[]]
        counts = [["--counts", "zipf:1.5,3"], ["--counts", "random:5"]] if coll in VARYING \
            else [[]]
        for place in ([], ["-l"]):
            for root in roots:
                for count in counts:
                    args = ["-m", sizes, *place, *root, *count]
                    algo_all(env, np, coll, args, env.path(f"{coll}.{np}.json"))


@case('-asan')
def engine_gather_scatter_two_ranks(env):
    every_form(env, 2, "1:1M")


@case('-asan')
def engine_gather_scatter_three_ranks(env):
    """Odd: subtrees that wrap around the last rank travel as two pieces."""
    every_form(env, 3, "4:64K")


@case('-asan')
def engine_gather_scatter_four_ranks(env):
    every_form(env, 4, "4:64K")


@case('-asan')
def engine_gather_scatter_dtypes_and_private_buffers(env):
    """Every element type; private buffers (--alloc plain), where shm reads peers with
    cross-memory attach or gathers through the root, or is refused and skipped."""
    for dtype in ("char", "int32", "int64", "float", "double", "half", "bfloat16"):
        for coll in ("gather", "scatterv"):
            algo_all(env, 2, coll, ["-m", "2:4K", "--dtype", dtype, "-k", "1", "-l"],
                     env.path(f"{coll}.{dtype}.json"))
    for coll in COLLS:
        out = env.path(f"{coll}.plain.json")
        env.ok(2, coll, ["--backend", "engine", "--algo", "all", "--alloc", "plain", "-c",
                         *FAST, "-m", "4:256K", "-J", out])
        bad = [r for r in load_json(out)["results"] if not r["validation"]["passed"]]
        check(not bad, f"{coll} --alloc plain: not passed: {bad}")


def library_up_to(coll):
    """The largest size the default table hands `coll` to the MPI library at 2 ranks on
    private buffers ("mpi" rules, measured slower in the engine), 0 where it has none."""
    with open(TUNING) as f:
        rules = json.load(f)["rules"]
    return max([r.get("max_bytes") or 0 for r in rules
                if r["coll"] == coll and r["algo"] == "mpi" and r.get("buffers") == "private"
                and r.get("ranks", [2, 2])[0] <= 2 <= r.get("ranks", [2, 2])[1]], default=0)


@case
def engine_gather_scatter_default_choice(env):
    """Without --algo: shm on one node; without shared memory the buffers are private, so
    the table's private rules: the library up to their size, binomial above."""
    for coll in COLLS:
        for shm in ("1", "0"):
            out = env.path(f"{coll}.default.{shm}.json")
            env.ok(2, coll, ["--backend", "engine", "-c", *FAST, "-m", "4:64K", "-J", out],
                   env={"CB_ENGINE_SHM": shm})
            for r in load_json(out)["results"]:
                expected = "shm" if shm == "1" else \
                    "mpi" if r["bytes"] <= library_up_to(coll) else "binomial"
                check(r["algo"] == expected,
                      f"{coll} CB_ENGINE_SHM={shm} at {r['bytes']} B: chose {r['algo']}, "
                      f"expected {expected}")


@case
def engine_gather_scatter_validation_catches_corruption(env):
    """-c is not a formality on the engine either: a flipped byte fails each algorithm."""
    for coll in ("gather", "scatterv", "allgatherv"):
        for algo in sorted(ALGOS):
            check_corruption_caught(env, coll, ["--backend", "engine", "--algo", algo])


@case
def engine_gather_scatter_persistent(env):
    """Built once at init, re-armed at every start: -c runs a later start on refilled,
    poisoned buffers, so a start that moved nothing (or the first start's data) fails.
    The mpi algorithm has no persistent engine form and is refused, saying which have."""
    for np in (2, 3):
        wait = ["--wait", "yield"] if np > 2 else []
        for coll in COLLS:
            root = ["-k", "rotate"] if coll in ROOTED else []
            count = ["--counts", "zipf:1.5,3"] if coll in VARYING else []
            for place in ([], ["-l"]):
                out = env.path(f"{coll}_persistent.{np}.json")
                env.ok(np, coll + "_persistent",
                       ["--backend", "engine", "--algo", "all", "-c", "-i", "5", "-x", "2",
                        "-m", "4:256K", *wait, *root, *count, *place, "-J", out], timeout=240)
                results = load_json(out)["results"]
                seen = {r["algo"] for r in results}
                check(seen == ALGOS - {"mpi"}, f"{coll}_persistent: measured {seen}")
                bad = [(r["bytes"], r["algo"]) for r in results if not r["validation"]["passed"]]
                check(not bad, f"{coll}_persistent {place} at {np} ranks: not passed: {bad}")
                check(all(r["persistent_init_us"] > 0 for r in results),
                      f"{coll}_persistent: init time recorded")
    r = env.run(2, "gather_persistent", ["--backend", "engine", "--algo", "mpi", "-m", "64"])
    check(r.rc == 2 and "no persistent form" in r.err and "binomial, shm" in r.err,
          f"engine mpi persistent: expected a refusal naming binomial, shm: {r}")
    r = env.run(2, "allreduce_persistent", ["--backend", "engine", "-m", "64"])
    check(r.rc == 2 and "no persistent form" in r.err, f"allreduce_persistent on engine: {r}")
