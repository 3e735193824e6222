#!/usr/bin/env python3
"""What a communicator costs with and without libcb_engine_preload.so (issue 39).

Runs tests/preload/comm_cost.c (build/tests/cb_comm_cost) on plain MPI and under the
preload, interleaved (the order alternates from pass to pass), PASSES times, at each rank
count, for each mode:
  dup, split                  make and free a communicator (MPI_Comm_dup; MPI_Comm_split)
  dup_bor, split_bor          ... with one 8-byte MPI_Allreduce the preload hands to MPI
  dup_sum, split_sum          ... with one 8-byte MPI_Allreduce the engine takes
The first four are communicators the engine never touches: the bound of issue 39 is the
preload's cost per communicator within 10 % + 50 us of plain MPI's. Under the _sum modes
the engine is made at the allreduce; they also run as "preload_1mib" (CB_SHM_STAGING_BYTES
and CB_SHM_CHANNEL_BYTES at 1 MiB), which shows how much of that cost the shared memory's
size is. At more ranks than cores the preload's ranks wait yielding (CB_PRELOAD_WAIT=yield).
Each pass at one rank count holds /tmp/cb_mpi.lock, and /tmp/cb_quiet.lock exclusively (no
build meanwhile) where it can be had within a minute; every run records whether it was
(quiet_lock) and the load average.

  scripts/preload_comm_cost.py --out results/vm-20261127/comm-cost [--ranks 2,4]
      [--passes 6] [--rounds 1000] [--split-rounds 100] [--engine-rounds 100]
  scripts/preload_comm_cost.py --table DIR     # README.md again from DIR/comm_cost.json

Writes DIR/comm_cost.json (every run, and per rank count and mode the medians with 95 %
intervals and the paired ratio, scripts/cbstats.py) and DIR/README.md, a table generated
from it."""
import argparse
import datetime
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbstats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNTOUCHED = ("dup", "dup_bor", "split", "split_bor")
ENGINE = ("dup_sum", "split_sum")
SMALL_SHM = {"CB_SHM_STAGING_BYTES": str(1 << 20), "CB_SHM_CHANNEL_BYTES": str(1 << 20)}


def run(bindir, lib, mpirun, np, mode, rounds, variant):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("CB_")}
    if variant != "plain":
        env["LD_PRELOAD"] = lib
        if np > (os.cpu_count() or 1):
            env["CB_PRELOAD_WAIT"] = "yield"
        if variant == "preload_1mib":
            env.update(SMALL_SHM)
    cmd = [mpirun, "-n", str(np), os.path.join(bindir, "tests", "cb_comm_cost"), mode,
           str(rounds)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"preload_comm_cost: {' '.join(cmd)} ({variant}) failed, exit "
                         f"{p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    out = json.loads(line)
    out["variant"] = variant
    return out


QUIET_WAIT = 60


def locked(path, wait=None):
    """Holds `path` exclusively (flock) until the returned file is closed; with `wait`,
    None if it cannot be had within that many seconds."""
    f = open(path, "a")
    if wait is None:
        fcntl.flock(f, fcntl.LOCK_EX)
        return f
    end = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            if time.monotonic() > end:
                f.close()
                return None
            time.sleep(0.05)


def summarise(runs):
    """Per (ranks, mode): each variant's median and interval, the paired ratio to plain, and
    for the untouched modes whether the preload is within 10 % + 50 us of plain."""
    out = []
    keys = sorted({(r["ranks"], r["mode"]) for r in runs})
    for ranks, mode in keys:
        mine = [r for r in runs if r["ranks"] == ranks and r["mode"] == mode]
        by = {}
        for r in mine:
            by.setdefault(r["variant"], {})[r["pass"]] = r
        passes = sorted(by["plain"])
        entry = {"ranks": ranks, "mode": mode, "rounds": mine[0]["rounds"]}
        for variant, rs in by.items():
            us = [rs[k]["us_per_comm"] for k in passes if k in rs]
            entry[variant] = {
                "us_per_comm": cbstats.median_interval(us) or {"median": cbstats.median(us)},
                "shm_high_water_bytes": max(rs[k]["shm_high_water_bytes"] for k in rs),
                "shm_start_bytes": max(rs[k]["shm_start_bytes"] for k in rs)}
            if variant != "plain":
                base = [by["plain"][k]["us_per_comm"] for k in passes if k in rs]
                entry[variant]["ratio_to_plain"] = cbstats.compare_paired(base, us)
                extra = [u - b for b, u in zip(base, us)]
                entry[variant]["extra_us_per_comm"] = (cbstats.median_interval(extra) or
                                                       {"median": cbstats.median(extra)})
        if mode in UNTOUCHED and "preload" in entry:
            plain = entry["plain"]["us_per_comm"]["median"]
            bound = 0.1 * plain + 50.0
            extra = entry["preload"]["extra_us_per_comm"]
            entry["bound_us"] = bound
            # The bound holds when the upper end of the extra cost's interval is within it.
            entry["within_bound"] = extra.get("hi", extra["median"]) <= bound
        out.append(entry)
    return out


def mib(b):
    return f"{b / (1 << 20):.1f}"


def table(doc):
    lines = [
        "# What a communicator costs under the preload (issue 39)",
        "",
        f"Generated by `scripts/preload_comm_cost.py` from [comm_cost.json](comm_cost.json) "
        f"({doc['machine']}, {doc['mpi']}, revision {doc['git_revision'][:10]}"
        f"{' + uncommitted changes' if doc.get('dirty') else ''}, {doc['date']}; "
        f"{doc['passes']} interleaved passes of {doc.get('passes_asked', doc['passes'])} asked)."
        " One round makes a communicator, maybe runs "
        "one 8-byte `MPI_Allreduce` on it, and frees it (`tests/preload/comm_cost.c`): "
        "`dup`/`split` nothing, `_bor` an allreduce the preload hands to MPI (`MPI_BOR`), "
        "`_sum` one the engine takes (`MPI_SUM` on a double), which makes the engine. Time "
        "per communicator (slowest rank), median of the passes [95 % interval]; extra: "
        "preload minus plain, paired per pass; bound: 10 % of plain + 50 us. `/dev/shm`: the "
        "high-water mark of the distinct files the ranks map (MPI's own included; the "
        "preload's includes `MPI_COMM_WORLD`'s engine, made at `MPI_Init`). "
        "`preload_1mib`: the preload with `CB_SHM_STAGING_BYTES` and `CB_SHM_CHANNEL_BYTES` "
        "at 1 MiB. "
        f"{sum(1 for r in doc['runs'] if r.get('quiet_lock'))} of {len(doc['runs'])} runs held "
        "/tmp/cb_quiet.lock (no build meanwhile); load average 1 min during the runs "
        f"{min(r.get('load_1min', 0) for r in doc['runs']):.1f}-"
        f"{max(r.get('load_1min', 0) for r in doc['runs']):.1f}.",
        "",
        "| ranks | mode | rounds | plain us | preload us | extra us | bound us | within | "
        "plain /dev/shm MiB | preload /dev/shm MiB |",
        "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|"]

    def cell(mi):
        if "lo" in mi:
            return f"{mi['median']:.1f} [{mi['lo']:.1f}, {mi['hi']:.1f}]"
        return f"{mi['median']:.1f}"

    for e in doc["summary"]:
        for variant in [v for v in ("preload", "preload_1mib") if v in e]:
            p, q = e["plain"], e[variant]
            bound = f"{e['bound_us']:.1f}" if "bound_us" in e and variant == "preload" else ""
            within = ("yes" if e["within_bound"] else "no") if bound else ""
            mode = e["mode"] + ("" if variant == "preload" else " (1 MiB)")
            lines.append(f"| {e['ranks']} | {mode} | {e['rounds']} | {cell(p['us_per_comm'])} | "
                         f"{cell(q['us_per_comm'])} | {cell(q['extra_us_per_comm'])} | {bound} | "
                         f"{within} | {mib(p['shm_high_water_bytes'])} | "
                         f"{mib(q['shm_high_water_bytes'])} |")
    lines.append("")
    return "\n".join(lines)


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="results folder (comm_cost.json, README.md)")
    ap.add_argument("--table", help="regenerate DIR/README.md from DIR/comm_cost.json")
    ap.add_argument("--bindir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=1000, help="rounds of dup and dup_bor")
    ap.add_argument("--split-rounds", type=int, default=100, help="rounds of split, split_bor")
    ap.add_argument("--engine-rounds", type=int, default=100, help="rounds of the _sum modes")
    a = ap.parse_args()
    if a.table:
        with open(os.path.join(a.table, "comm_cost.json")) as f:
            doc = json.load(f)
        with open(os.path.join(a.table, "README.md"), "w") as f:
            f.write(table(doc))
        return
    if not a.out:
        ap.error("--out or --table")
    ranks = [int(x) for x in a.ranks.split(",")]
    # A copy of the library and the program: the shared build folder may be rebuilt meanwhile.
    keep = tempfile.mkdtemp(prefix="cb_comm_cost.")
    os.makedirs(os.path.join(keep, "tests"))
    shutil.copy(os.path.join(a.bindir, "libcb_engine_preload.so"), keep)
    shutil.copy(os.path.join(a.bindir, "tests", "cb_comm_cost"), os.path.join(keep, "tests"))
    lib = os.path.join(keep, "libcb_engine_preload.so")
    rounds = {"dup": a.rounds, "dup_bor": a.rounds, "split": a.split_rounds,
              "split_bor": a.split_rounds, "dup_sum": a.engine_rounds,
              "split_sum": a.engine_rounds}
    runs = []
    for k in range(a.passes):
        for np in ranks:
            # One pass at one rank count at a time: no other MPI job (the MPI lock first),
            # and no build if /tmp/cb_quiet.lock can be had exclusively within QUIET_WAIT
            # seconds (its shared holders wait for the MPI lock meanwhile; a pending
            # exclusive lock does not keep new shared ones out, so waiting longer may starve).
            mpi = locked("/tmp/cb_mpi.lock")
            quiet = locked("/tmp/cb_quiet.lock", QUIET_WAIT)
            for mode in UNTOUCHED + ENGINE:
                variants = ["plain", "preload"] + (["preload_1mib"] if mode in ENGINE else [])
                if k % 2:
                    variants.reverse()
                for v in variants:
                    r = run(keep, lib, a.mpirun, np, mode, rounds[mode], v)
                    r["pass"] = k
                    r["quiet_lock"] = quiet is not None
                    r["load_1min"] = os.getloadavg()[0]
                    runs.append(r)
                    print(f"pass {k} np={np} {mode} {v}: {r['us_per_comm']:.1f} us, /dev/shm "
                          f"{mib(r['shm_high_water_bytes'])} MiB", flush=True)
            mpi.close()
            if quiet:
                quiet.close()
            write(a, runs, k + 1)  # after every pass at every rank count: what is done so far
    shutil.rmtree(keep)


def write(a, runs, passes_done):
    mpi = subprocess.run([a.mpirun, "--version"], capture_output=True, text=True).stdout
    doc = {
        "description": "Cost of making (and freeing) an MPI communicator on plain MPI and "
                       "under libcb_engine_preload.so (issue 39), from "
                       "scripts/preload_comm_cost.py; runs: one object per run of "
                       "tests/preload/comm_cost.c (us_per_comm: the slowest rank's time per "
                       "round; shm_high_water_bytes: distinct /dev/shm files mapped by the "
                       "ranks, at most; quiet_lock: whether no build could run meanwhile; load_1min: the "
                       "load average); summary: per rank count and mode, each variant's "
                       "median with its 95 % interval (scripts/cbstats.py), the paired ratio "
                       "and extra time against plain, and for communicators the engine never "
                       "touches whether the extra time's interval is within bound_us (10 % of "
                       "plain's median + 50 us).",
        "machine": platform.node(),
        "mpi": next((" ".join(l.split()) for l in mpi.splitlines() if "Version:" in l),
                    "unknown"),
        "git_revision": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no", "src")),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "passes": passes_done,
        "passes_asked": a.passes,
        "cores": os.cpu_count(),
        "runs": runs,
        "summary": summarise(runs),
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "comm_cost.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(a.out, "README.md"), "w") as f:
        f.write(table(doc))


if __name__ == "__main__":
    main()
