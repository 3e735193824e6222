#!/usr/bin/env python3
"""Compares collbench's small-size figures with OMB's timing method, from the runs
scripts/omb_fidelity.sh made: best of the rounds per size, ratio, within tolerance.

  omb_fidelity.py DIR [--tolerance PCT] [--out FILE.json]
  omb_fidelity.py DIR --callgrind --iters N --warmup N

DIR holds, per round R and benchmark B (latency, bcast, allreduce, alltoall):
cb_B.R.json (collbench's JSON) and ref_B.R.txt (tests/fidelity/omb_loop's lines
"SIZE LATENCY_US"; ref2_B.R.txt the same with --two-comms, for the collectives).
The figure compared is OMB's: latency_us.avg (cb_latency: one-way latency; collectives:
the average over ranks of each rank's mean). Best = the smallest over the rounds (the
run least disturbed by the rest of the machine), as the issue asks. Writes a Markdown
table to stdout and a collbench.fidelity/1 JSON document (--out, default DIR/fidelity.json).
With --callgrind, DIR holds callgrind profiles of the timed loops alone
(cg.cb_B.PID, cg.ref_B.PID): the instructions per iteration outside the collective and the
barrier (the loop's own: clock reads, dispatch, bookkeeping), collbench's against the
reference's, from callgrind_annotate; DIR/callgrind.json. Standard library only.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

BENCHES = ("latency", "bcast", "allreduce", "alltoall")


def read_ref(path):
    """{size: latency_us} from omb_loop's output; ValueError on any other line."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                raise ValueError(f"{path}:{n}: expected 'SIZE LATENCY_US', got {line!r}")
            out[int(parts[0])] = float(parts[1])
    return out


def read_cb(path):
    """{size: (latency_us avg, harness_overhead_us or None)} from a collbench result."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != "collbench.result/1":
        raise ValueError(f"{path}: not a collbench result document")
    return {r["bytes"]: (r["latency_us"]["avg"], r.get("harness_overhead_us"))
            for r in doc["results"]}


def rounds(directory, pattern):
    """Files of every round for a pattern like 'cb_bcast.*.json', in round order."""
    def number(path):
        m = re.search(r"\.(\d+)\.[a-z]+$", path)
        return int(m.group(1)) if m else 0
    return sorted(glob.glob(os.path.join(directory, pattern)), key=number)


def best(runs):
    """{size: smallest value over the runs} for sizes every run has."""
    sizes = set.intersection(*(set(r) for r in runs)) if runs else set()
    return {s: min(r[s] for r in runs) for s in sorted(sizes)}


def compare(directory, tolerance):
    doc = {"schema": "collbench.fidelity/1", "tolerance_percent": tolerance, "benchmarks": {}}
    for bench in BENCHES:
        cb_files = rounds(directory, f"cb_{bench}.*.json")
        ref_files = rounds(directory, f"ref_{bench}.*.txt")
        if not cb_files or not ref_files:
            continue
        cb_runs = [read_cb(p) for p in cb_files]
        cb = best([{s: v[0] for s, v in run.items()} for run in cb_runs])
        overhead = best([{s: v[1] for s, v in run.items() if v[1] is not None} for run in cb_runs])
        ref = best([read_ref(p) for p in ref_files])
        two = rounds(directory, f"ref2_{bench}.*.txt")
        ref2 = best([read_ref(p) for p in two]) if two else {}
        rows = []
        for size in sorted(set(cb) & set(ref)):
            ratio = cb[size] / ref[size] if ref[size] > 0 else float("inf")
            row = {"bytes": size, "collbench_us": cb[size], "omb_method_us": ref[size],
                   "ratio": ratio, "within": abs(ratio - 1) * 100 <= tolerance}
            if size in overhead:
                row["harness_overhead_us"] = overhead[size]
            if size in ref2:
                row["omb_method_two_comms_us"] = ref2[size]
            rows.append(row)
        doc["benchmarks"][bench] = {"rounds": min(len(cb_files), len(ref_files)), "sizes": rows}
    return doc


# The MPI calls a timed loop makes besides its clock reads: what is left of the loop's
# instructions without them (inclusive) is the loop's own.
MPI_CALLS = re.compile(r"(?:^|[\s:])P?MPI_(Bcast|Allreduce|Alltoall|Barrier|Ibarrier|Ibcast|"
                       r"Iallreduce|Ialltoall|Wait|Test)\b")


def loop_instructions(path):
    """(instructions collected, instructions inside top-level MPI calls, collective calls)
    of one profile; the calls (callgrind_annotate's "=> f (Nx)" lines) count the loop's
    iterations."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    total, in_mpi, calls = None, 0, 0
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(=>\s+)?(.*)$", line)
        if not m:
            continue
        ir, call, what = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
        found = MPI_CALLS.search(what.split(" [")[0])
        if "PROGRAM TOTALS" in what:
            total = ir
        elif call and found and found.group(1) in ("Bcast", "Allreduce", "Alltoall"):
            n = re.search(r"\((\d+)x\)", what)
            calls = max(calls, int(n.group(1))) if n else calls
        elif found and not call:
            in_mpi += ir
    if total is None or calls == 0:
        raise ValueError(f"{path}: no PROGRAM TOTALS or no collective call in callgrind_annotate's "
                         "output")
    return total, in_mpi, calls


def callgrind(directory, iters, warmup):
    doc = {"schema": "collbench.fidelity_callgrind/1", "iterations": iters, "warmup": warmup,
           "benchmarks": {}}
    for bench in BENCHES[1:]:
        sides = {}
        for side, prefix in (("collbench", "cb"), ("omb_method", "ref")):
            files = sorted(glob.glob(os.path.join(directory, f"cg.{prefix}_{bench}.*")))
            if not files:
                continue
            own = [(t - m) / n for t, m, n in map(loop_instructions, files)]
            sides[side] = {"per_rank": own, "mean": sum(own) / len(own)}
        if len(sides) == 2:
            sides["extra_per_iteration"] = sides["collbench"]["mean"] - sides["omb_method"]["mean"]
            doc["benchmarks"][bench] = sides
    return doc


def markdown(doc):
    lines = []
    for bench, b in doc["benchmarks"].items():
        lines.append(f"### {bench} (best of {b['rounds']} interleaved rounds)\n")
        lines.append("| Size (B) | collbench (us) | OMB method (us) | ratio | within "
                     f"{doc['tolerance_percent']:g}% | harness overhead (us) | OMB method, "
                     "two communicators (us) |")
        lines.append("|---:|---:|---:|---:|:---:|---:|---:|")
        for r in b["sizes"]:
            over = r.get("harness_overhead_us")
            two = r.get("omb_method_two_comms_us")
            lines.append(f"| {r['bytes']} | {r['collbench_us']:.3f} | {r['omb_method_us']:.3f} | "
                         f"{r['ratio']:.3f} | {'yes' if r['within'] else 'NO'} | "
                         f"{'' if over is None else f'{over:.4f}'} | "
                         f"{'' if two is None else f'{two:.3f}'} |")
        lines.append("")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--tolerance", type=float, default=5.0, help="percent (default 5)")
    ap.add_argument("--out", help="JSON output (default DIR/fidelity.json)")
    ap.add_argument("--callgrind", action="store_true", help="compare callgrind profiles")
    ap.add_argument("--iters", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=0)
    a = ap.parse_args(argv)
    if a.callgrind:
        try:
            doc = callgrind(a.dir, a.iters, a.warmup) if a.iters > 0 else None
        except (OSError, ValueError, subprocess.CalledProcessError) as e:
            print(f"omb_fidelity.py: {e}", file=sys.stderr)
            return 2
        if not doc or not doc["benchmarks"]:
            print(f"omb_fidelity.py: --callgrind needs --iters and cg.cb_*/cg.ref_* profiles "
                  f"in {a.dir}", file=sys.stderr)
            return 2
        with open(a.out or os.path.join(a.dir, "callgrind.json"), "w") as f:
            json.dump(doc, f, indent=1)
        print("| Collective | collbench loop (instructions / iteration) | OMB method loop | extra |")
        print("|---|---:|---:|---:|")
        for bench, b in doc["benchmarks"].items():
            print(f"| {bench} | {b['collbench']['mean']:.1f} | {b['omb_method']['mean']:.1f} | "
                  f"{b['extra_per_iteration']:+.1f} |")
        return 0
    try:
        doc = compare(a.dir, a.tolerance)
    except (OSError, ValueError, KeyError) as e:
        print(f"omb_fidelity.py: {e}", file=sys.stderr)
        return 2
    if not doc["benchmarks"]:
        print(f"omb_fidelity.py: no cb_*.N.json with ref_*.N.txt in {a.dir}", file=sys.stderr)
        return 2
    with open(a.out or os.path.join(a.dir, "fidelity.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
