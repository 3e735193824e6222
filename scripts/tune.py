#!/usr/bin/env python3
"""Regenerates the engine's tuning table from measurements on this machine.

For each collective it runs `cb_<coll> --backend engine --algo all` twice, with the
engine's shared memory on and off (CB_ENGINE_SHM=0: the MPI transport), or reads such
result files with --from / --from-noshm; takes per size the algorithm with the lowest
median slowest-rank time (robust to the outliers of a shared machine), merges
neighbouring sizes with the same winner into one [min_bytes, max_bytes] rule, and writes
a collbench.tuning/1 table whose rules are tried in order:

  1. the shared-memory winners (all ranks on one node),
  2. the hierarchical algorithms (ranks on several nodes),
  3. the MPI-transport winners (shared memory off or unavailable),

each for the measured rank count, followed by fixed rules for other rank counts (GENERAL:
the usual crossovers; one small machine cannot measure them). Before them come the
winners on private buffers (measured with --alloc plain, as a program's own memory, for
which the engine's shared-memory algorithms must stage or use cross-memory attach), as
rules with "buffers": "private" that buffers in the engine's shared heap skip. Private
buffers are what a program under the preload (libcb_engine_preload.so) has, so for the
collectives the preload routes each algorithm of that --algo all run is timed again as
such a program sees it: `cb_<coll> --backend mpi` under LD_PRELOAD with
CB_<COLL>_ALGO=<algo> (the preload's own cost per call included; "mpi" is then the call
passed straight to the library), at the sizes where the algorithm ran (--preload; offline
--from-preloaded). Without the preload, the engine's "mpi" algorithm competes with the
time of `cb_<coll> --backend mpi` on the same sizes (--from-library). Where "mpi" wins,
the preload passes the call straight to the library. --tiers measures some tiers only and
keeps the host rules of the others from --out. Rules for other memory kinds
(device buffers) and the "parameters" object (the hierarchical algorithms' thresholds) are
kept from the previous table at --out.

  scripts/tune.py --build build --ranks 2 --out src/engine/tuning/default.json

Rank counts this machine cannot time (busy-polling ranks beyond its cores) are measured
where the cores are (scripts/gpu_check.sh's GPU_CHECK_TUNE_RANKS on the GPU host: `--algo
all` at 4, 8 and 16 ranks) and merged into the table, rank count by rank count:

  scripts/tune.py --merge --ranks 16 --from tune_*_16.json --out src/engine/tuning/default.json

The runs are started by scripts/launch.sh (`mpirun -n RANKS` here; srun inside a Slurm
allocation, CB_HOSTFILE and CB_PPN for mpirun on several nodes: docs/cluster.md, "On a cluster"),
or by `--mpirun MPIRUN -n RANKS` when --mpirun is given.
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys

COLLS = {"allreduce": "4:64M", "bcast": "4:64M", "alltoall": "4:4M",
         "allgather": "4:16M", "reduce_scatter": "4:16M",
         "reduce": "4:64M", "alltoallv": "4:4M", "barrier": None,  # barrier: no sizes
         "gather": "4:16M", "scatter": "4:16M", "gatherv": "4:16M", "scatterv": "4:16M",
         "allgatherv": "4:16M",
         # on -N's default topology (cart:2:1); the size is one neighbor's block
         "neighbor_allgather": "4:4M", "neighbor_allgatherv": "4:4M",
         "neighbor_alltoall": "4:4M", "neighbor_alltoallv": "4:4M",
         "neighbor_alltoallw": "4:4M"}
# What libcb_engine_preload.so routes to the engine (docs/preload.md), barrier aside (no
# buffers, so no private-buffer tier).
PRELOADED = {"allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "reduce", "gather",
             "scatter", "allgatherv"}
HIERARCHICAL = {"allreduce", "bcast"}  # tried between the shared-memory and MPI tiers
TIERS = {  # name: (CB_ENGINE_SHM, extra options)
    "plain": (True, ["--alloc", "plain"]),
    "shm": (True, []),
    "noshm": (False, []),
}


def fail(msg):
    print(f"tune.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def launcher(ranks, mpirun):
    """The command that starts `ranks` ranks: `MPIRUN -n RANKS` when --mpirun is given, else
    scripts/launch.sh's (the same as the main job's: CB_LAUNCHER, CB_HOSTFILE, CB_PPN ...)."""
    if mpirun:
        return [mpirun, "-n", str(ranks)]
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.sh")
    p = subprocess.run(["bash", script, "--print0", str(ranks)], capture_output=True)
    if p.returncode != 0:
        fail(p.stderr.decode(errors="replace").strip() or f"{script} failed")
    return p.stdout.decode().split("\0")[:-1]


def measure(build, coll, ranks, sizes, iterations, out, mpirun, shm, extra, backend="engine",
            env_extra=None):
    """One run; `env_extra` adds variables (LD_PRELOAD and CB_<COLL>_ALGO under the preload)."""
    cmd = launcher(ranks, mpirun) + [
        os.path.join(build, f"cb_{coll}"), "--backend", backend, "-J", out] + (
        ["--algo", "all"] if backend == "engine" else []) + (
        ["-m", sizes] if sizes else []) + extra
    if iterations:
        cmd += ["-i", str(iterations), "-x", str(max(1, iterations // 10))]
    added = dict(CB_ENGINE_SHM="1" if shm else "0", **(env_extra or {}))
    print("tune.py:", " ".join(f"{k}={v}" for k, v in added.items()), " ".join(cmd), flush=True)
    if subprocess.run(cmd, stdout=subprocess.DEVNULL, env=dict(os.environ, **added)).returncode:
        fail(f"{' '.join(cmd)} failed")


def algo_variable(coll):
    return f"CB_{coll.upper()}_ALGO"


def under_preload(doc, preloaded):
    """The plain tier's --algo all document with every algorithm's times replaced by those
    of its run under the preload (`preloaded`: the documents of one collective, each naming
    its forced algorithm in environment.cb_variables), at the sizes where the algorithm ran
    in `doc`: elsewhere it refuses, and the preload passes the call to the library."""
    coll = doc["benchmark"]["name"]
    ran = {(r["bytes"], r["algo"]) for r in doc.get("results", []) if r.get("algo")}
    out = dict(doc)
    out["results"] = []
    for d in preloaded:
        env = d.get("environment", {})
        algo = env.get("cb_variables", {}).get(algo_variable(coll))
        if not env.get("ld_preload") or not algo:
            fail(f"{coll}: a --from-preloaded document without LD_PRELOAD and "
                 f"{algo_variable(coll)} in its environment")
        out["results"] += [dict(r, algo=algo) for r in d.get("results", [])
                           if (r["bytes"], algo) in ran]
    return out


def with_library(doc, library):
    """The plain tier's --algo all document with its "mpi" algorithm's times replaced by
    those of the MPI library called directly (--backend mpi on the same sizes): that is
    what a program under the preload gets where the table names "mpi" (docs/preload.md),
    without the engine's schedule around the call that --algo all times."""
    if not library:
        return doc
    out = dict(doc)
    out["results"] = [r for r in doc.get("results", []) if r.get("algo") != "mpi"]
    out["results"] += [dict(r, algo="mpi") for r in library.get("results", [])]
    return out


def winners(doc, tolerance):
    """[(bytes, algo, time_us)]: per size the algorithm to use. The algorithm chosen for
    the previous size is kept while it is within `tolerance` of the fastest, so that
    noise between equivalent algorithms does not fragment the table."""
    times = {}
    for r in doc.get("results", []):
        t = r.get("slowest_rank_us", {}).get("p50")
        if t is not None and r.get("algo"):
            times.setdefault(r["bytes"], {})[r["algo"]] = t
    out, current = [], None
    for size in sorted(times):
        by_algo = times[size]
        best = min(by_algo, key=by_algo.get)
        if current not in by_algo or by_algo[current] > by_algo[best] * (1 + tolerance):
            current = best
        out.append((size, current, by_algo[current]))
    return out


def rules_for(coll, wins, ranks):
    """[min_bytes, max_bytes] rules from the winners, for `ranks` and then for any."""
    rules, low = [], 0
    for i, (size, algo, _) in enumerate(wins):
        last = i + 1 == len(wins)
        if last or wins[i + 1][1] != algo:
            rule = {"coll": coll, "mem": "host", "algo": algo}
            if low:
                rule["min_bytes"] = low
            if not last:
                rule["max_bytes"] = size
                low = size + 1
            rules.append(rule)
    return [dict(r, ranks=[ranks, ranks]) for r in rules]


# Rules for rank counts that were not measured (a 2-core machine cannot time 8 busy-polling
# ranks): the usual crossovers (MPICH's defaults, single-copy reasoning for shared memory).
# Fixed rules for rank counts this machine did not measure. "small" (the small-message
# slots, issue 30) comes first up to its slot size: it runs only on one node and where a
# rank's contribution fits its slot (16 KiB; alltoall and reduce_scatter: all blocks), and
# the next rule takes over where it cannot.
GENERAL = {
    ("allreduce", "shm"): [("small", 0, 16384), ("shm_flat", 0, 16384), ("shm", 16385, None)],
    ("bcast", "shm"): [("small", 0, 16384), ("shm", 0, None)],
    ("alltoall", "shm"): [("small", 0, 16384), ("shm", 0, None)],
    ("allreduce", "noshm"): [("recursive_doubling", 0, 8192), ("rabenseifner", 8193, 524288),
                             ("ring", 524289, None)],
    ("bcast", "noshm"): [("binomial", 0, 16384), ("scatter_allgather", 16385, None)],
    ("alltoall", "noshm"): [("bruck", 0, 256), ("pairwise", 257, None)],
    ("allgather", "shm"): [("small", 0, 16384), ("shm", 0, None)],
    ("allgather", "noshm"): [("recursive_doubling", 0, 65536), ("bruck", 0, 8192),
                             ("ring", 0, None)],  # the first that can run: pof2, then any
    ("reduce_scatter", "shm"): [("small", 0, 16384), ("shm", 0, None)],
    ("reduce_scatter", "noshm"): [("recursive_halving", 0, 65536), ("pairwise", 0, None)],
    ("reduce", "shm"): [("small", 0, 16384), ("shm", 0, None)],
    ("reduce", "noshm"): [("binomial", 0, 16384), ("rabenseifner", 16385, None)],
    ("barrier", "shm"): [("small", 0, None), ("shm", 0, None)],
    ("barrier", "noshm"): [("dissemination", 0, None)],
    ("alltoallv", "shm"): [("small", 0, 16384), ("shm", 0, None)],
    ("alltoallv", "noshm"): [("pairwise", 0, None)],
    ("gather", "shm"): [("shm", 0, None)],
    ("gather", "noshm"): [("binomial", 0, None)],
    ("scatter", "shm"): [("shm", 0, None)],
    ("scatter", "noshm"): [("binomial", 0, None)],
    ("gatherv", "shm"): [("shm", 0, None)],
    ("gatherv", "noshm"): [("binomial", 0, None)],
    ("scatterv", "shm"): [("shm", 0, None)],
    ("scatterv", "noshm"): [("binomial", 0, None)],
    ("allgatherv", "shm"): [("shm", 0, None)],
    ("allgatherv", "noshm"): [("binomial", 0, None)],
    # one engine algorithm (exchange, over each peer's transport) for the neighborhoods
    **{(f"neighbor_{c}", tier): [("exchange", 0, None)]
       for c in ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw")
       for tier in ("shm", "noshm")},
}


def general_rules(coll, tier):
    out = []
    for algo, low, high in GENERAL[(coll, tier)]:
        rule = {"coll": coll, "mem": "host", "algo": algo}
        if low:
            rule["min_bytes"] = low
        if high is not None:
            rule["max_bytes"] = high
        out.append(rule)
    return out


def previous_table(path):
    """The existing table at `path`, or {} where there is none (or it cannot be read)."""
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, json.JSONDecodeError):
        return {}
    return old if isinstance(old, dict) else {}


def kept_rules(old):
    """The rules of the previous table for memory kinds other than host."""
    rules = old.get("rules", [])
    if not isinstance(rules, list):
        return []
    return [r for r in rules if isinstance(r, dict) and r.get("mem", "host") != "host"]


def kept_tier_rules(old, coll, tier):
    """The previous table's host rules of `coll` in `tier` (plain: those limited to private
    buffers; shm and noshm: the others, which the two tiers share in table order), for a
    run that does not measure that tier. shm and noshm come back together, under shm."""
    if tier == "noshm":
        return []
    out = []
    for r in old.get("rules", []):
        if not isinstance(r, dict) or r.get("coll") != coll or r.get("mem", "host") != "host":
            continue
        if (r.get("buffers") == "private") == (tier == "plain"):
            out.append(r)
    return out


def kept_parameters(old):
    """The "parameters" object of the previous table (None where it has none): the
    measurements here do not cover them, so a regenerated table keeps them as they were."""
    params = old.get("parameters")
    return params if isinstance(params, dict) else None


def load_result(path):
    """A collbench result document (schema collbench.result/1), or a clear error."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")
    if not isinstance(doc, dict) or doc.get("schema") != "collbench.result/1":
        fail(f"{path}: not a collbench result (schema collbench.result/1)")
    return doc


def merge(a):
    """--merge: rules for one more rank count, measured elsewhere (a machine with the cores
    for it), added to an existing table. They are limited to the engine's shared buffers (what
    --algo all times by default) and placed before the collective's first host rule, so that
    they come before the rules for every rank count (the small-message slots' "small" up to a
    fixed size); private buffers keep the rules they had."""
    if not a.inputs or a.noshm_inputs or a.plain_inputs or a.library_inputs or a.preloaded_inputs:
        fail("--merge takes --from documents only (shared memory on)")
    old = previous_table(a.out)
    if not old.get("rules"):
        fail(f"--merge: {a.out} holds no table to merge into")
    rules, winners_out = list(old["rules"]), dict(old.get("winners", {}))
    for path in a.inputs:
        doc = load_result(path)
        env, coll = doc.get("environment", {}), doc["benchmark"]["name"]
        if env.get("nranks") != a.ranks:
            fail(f"{path}: measured at {env.get('nranks')} ranks, not --ranks {a.ranks}")
        wins = winners(doc, a.tolerance)
        if not wins:
            fail(f"{path}: no results with an algorithm (was it run with --algo all?)")
        note = (f"measured at {a.ranks} ranks on {env.get('hostname')} "
                f"({env.get('cpu', {}).get('model')}), engine --algo all, median slowest rank, "
                f"git {env.get('collbench', {}).get('git_revision')}, scripts/tune.py --merge"
                + (f": {a.source}" if a.source else ""))
        new = [dict(r, buffers="shared", comment=note) for r in rules_for(coll, wins, a.ranks)]
        rules = [r for r in rules if not (r.get("coll") == coll and r.get("mem", "host") == "host"
                                          and r.get("ranks") == [a.ranks, a.ranks]
                                          and r.get("buffers") == "shared")]
        at = next((i for i, r in enumerate(rules)
                   if r.get("coll") == coll and r.get("mem", "host") == "host"), len(rules))
        rules[at:at] = new
        winners_out[f"{coll}.shm.{a.ranks}ranks"] = [
            {"bytes": b, "algo": al, "p50_us": round(t, 3)} for b, al, t in wins]
        print(f"tune.py: {coll}: {len(new)} rules for {a.ranks} ranks")
    table = dict(old, rules=rules, winners=winners_out)
    with open(a.out, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    print(f"tune.py: merged into {a.out} ({len(rules)} rules)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=0, help="-i for each run (default: OMB's)")
    ap.add_argument("--mpirun", default=None,
                    help="start runs with MPIRUN -n RANKS (default: scripts/launch.sh's command)")
    ap.add_argument("--tolerance", type=float, default=0.10,
                    help="keep the previous size's algorithm while within this fraction of the best")
    ap.add_argument("--from", dest="inputs", nargs="*", help="--algo all results, shared memory on")
    ap.add_argument("--from-noshm", dest="noshm_inputs", nargs="*", default=[],
                    help="--algo all results with CB_ENGINE_SHM=0")
    ap.add_argument("--from-plain", dest="plain_inputs", nargs="*", default=[],
                    help="--algo all results with --alloc plain (shared memory on)")
    ap.add_argument("--from-library", dest="library_inputs", nargs="*", default=[],
                    help="--backend mpi results on the plain tier's sizes: the \"mpi\" "
                         "algorithm's times there")
    ap.add_argument("--preload", default=None,
                    help="the preload library the plain tier is timed under (default: "
                         "BUILD/libcb_engine_preload.so when it exists; '' for none)")
    ap.add_argument("--from-preloaded", dest="preloaded_inputs", nargs="*", default=[],
                    help="runs under the preload (cb_<coll> --backend mpi, LD_PRELOAD, "
                         "CB_<COLL>_ALGO): the plain tier's times of those algorithms")
    ap.add_argument("--tiers", default=",".join(TIERS),
                    help="the tiers to measure (comma-separated, of " + ", ".join(TIERS) +
                         "); the host rules and winners of the others are kept from --out")
    ap.add_argument("--merge", action="store_true",
                    help="add the rules of --ranks ranks from the --from documents (shared "
                         "memory on, the engine's shared buffers) to the table at --out, in "
                         "place of its shared-buffer rules for that rank count, before the "
                         "collective's other host rules; every other rule is kept")
    ap.add_argument("--source", default="",
                    help="with --merge: where the --from documents are kept, for each merged "
                         "rule's comment (e.g. results/h100-20261127/tune)")
    ap.add_argument("--workdir", default="tune-results")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    if a.merge:
        return merge(a)
    measured_tiers = [t for t in a.tiers.split(",") if t]
    for t in measured_tiers:
        if t not in TIERS:
            fail(f"--tiers: unknown tier '{t}' (known: {', '.join(TIERS)})")
    if ("shm" in measured_tiers) != ("noshm" in measured_tiers):
        fail("--tiers: shm and noshm are measured together (their rules interleave)")
    tiers = {name: {} for name in TIERS}
    library = {}  # the MPI library called directly, on the plain tier's buffers
    preloaded = {}  # collective: its runs under the preload, one per algorithm

    def read(paths, tier):
        for path in paths:
            doc = load_result(path)
            if tier == "preloaded":
                preloaded.setdefault(doc["benchmark"]["name"], []).append(doc)
            else:
                (library if tier == "library" else tiers[tier])[doc["benchmark"]["name"]] = doc

    if a.inputs or a.noshm_inputs or a.plain_inputs:
        read(a.inputs or [], "shm")
        read(a.noshm_inputs, "noshm")
        read(a.plain_inputs, "plain")
        read(a.library_inputs, "library")
        read(a.preloaded_inputs, "preloaded")
    else:
        lib = a.preload
        if lib is None:
            lib = os.path.join(a.build, "libcb_engine_preload.so")
            lib = lib if os.path.exists(lib) else ""
        lib = os.path.abspath(lib) if lib else ""
        os.makedirs(a.workdir, exist_ok=True)
        for tier, (shm, extra) in TIERS.items():
            if tier not in measured_tiers:
                continue
            for coll, sizes in COLLS.items():
                if tier == "plain" and sizes is None:
                    continue  # barrier: no buffers
                run = os.path.join(a.workdir, f"{coll}.engine.{tier}.all.json")
                measure(a.build, coll, a.ranks, sizes, a.iterations, run, a.mpirun, shm, extra)
                read([run], tier)
                if tier == "plain" and lib and coll in PRELOADED:  # as a program sees it
                    for algo in sorted({r["algo"] for r in tiers[tier][coll]["results"]
                                        if r.get("algo")}):
                        run = os.path.join(a.workdir, f"{coll}.preloaded.{algo}.json")
                        measure(a.build, coll, a.ranks, sizes, a.iterations, run, a.mpirun, shm,
                                [], backend="mpi",
                                env_extra={"LD_PRELOAD": lib, algo_variable(coll): algo})
                        read([run], "preloaded")
                elif tier == "plain":  # the library itself, on the program's own buffers
                    run = os.path.join(a.workdir, f"{coll}.mpi.plain.json")
                    measure(a.build, coll, a.ranks, sizes, a.iterations, run, a.mpirun, shm,
                            [], backend="mpi")
                    read([run], "library")

    old = previous_table(a.out)
    rules, measured = [], {}
    for coll in COLLS:
        for tier in TIERS:
            doc = tiers[tier].get(coll)
            if not doc:
                if tier not in measured_tiers:  # kept as the previous table had it
                    rules += kept_tier_rules(old, coll, tier)
                    key = f"{coll}.{tier}"
                    if key in old.get("winners", {}):
                        measured[key] = old["winners"][key]
                continue
            if tier == "plain" and coll in preloaded:
                doc = under_preload(doc, preloaded[coll])
            elif tier == "plain":
                doc = with_library(doc, library.get(coll))
            wins = winners(doc, a.tolerance)
            if not wins:
                fail(f"{coll}: no results with an algorithm (was it run with --algo all?)")
            if tier == "noshm" and coll in HIERARCHICAL:
                rules.append({"coll": coll, "mem": "host", "algo": "hierarchical"})
            if tier == "plain":  # for private buffers only; shared ones fall through
                rules += [dict(r, buffers="private") for r in rules_for(coll, wins, a.ranks)]
            else:
                rules += rules_for(coll, wins, a.ranks) + general_rules(coll, tier)
            measured[f"{coll}.{tier}"] = [{"bytes": b, "algo": al, "p50_us": round(t, 3)}
                                          for b, al, t in wins]
    docs = tiers["shm"] or tiers["noshm"] or tiers["plain"]
    if not docs:
        fail("no measurements")
    env = next(iter(docs.values()))["environment"]
    table = {
        "schema": "collbench.tuning/1",
        "description": "Generated by scripts/tune.py: fastest algorithm per size "
                       "(median slowest-rank time, hysteresis --tolerance) from engine --algo all sweeps",
        "measured_on": {"hostname": env.get("hostname", socket.gethostname()),
                        "cpu": env.get("cpu", {}).get("model"), "ranks": a.ranks,
                        "git_revision": env.get("collbench", {}).get("git_revision"),
                        "date": datetime.date.today().isoformat()},
        "tolerance": a.tolerance,
    }
    if preloaded:
        table["description"] += ("; private buffers timed under the preload for "
                                 + ", ".join(sorted(preloaded)))
    if len(measured_tiers) < len(TIERS):
        table["description"] += (f"; measured tiers: {', '.join(measured_tiers)}, the host rules "
                                 "of the others kept from the previous table")
    # Parameters and rules for memory kinds this run did not measure (device buffers) are
    # kept as they were.
    params = kept_parameters(old)
    if params is not None:
        table["parameters"] = params
    table["rules"] = rules
    table["winners"] = measured
    kept = kept_rules(old)
    if kept:
        table["rules"] += kept
        table["description"] += "; rules for other memory kinds kept from the previous table"
    if params is not None:
        table["description"] += "; parameters kept from the previous table"
    with open(a.out, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    print(f"tune.py: wrote {len(rules)} rules to {a.out}")


if __name__ == "__main__":
    main()
