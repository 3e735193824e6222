#!/usr/bin/env python3
"""summary.md for run.sh's files: per size the preload/MPICH time ratio (average latency,
each run the median of 3 passes; one interleaved pair), and the 8 B interposition cost
(median of 3 interleaved pairs)."""
import json
import os
import statistics
import sys

out = sys.argv[1]


def lat(name):
    with open(os.path.join(out, name + ".json")) as f:
        doc = json.load(f)
    return {r["bytes"]: r["latency_us"]["avg"] for r in doc["results"]}, doc


lines = ["# Issue 25: the preload after keeping MPI's promises, 2 ranks, this VM", "",
         "Made by `run.sh` here; ratio = preload / plain MPICH (< 1: the preload is faster).", ""]
summary = {}
for coll in ("allreduce", "bcast", "alltoall"):
    mpi, doc = lat(f"{coll}.mpi.1")
    pre, _ = lat(f"{coll}.preload.1")
    lines += [f"## {coll}", "", "| size | MPICH (us) | preload (us) | ratio |", "|---:|---:|---:|---:|"]
    ratios = []
    for b in sorted(mpi):
        if b in pre:
            r = pre[b] / mpi[b]
            ratios.append(r)
            lines.append(f"| {b} | {mpi[b]:.1f} | {pre[b]:.1f} | {r:.2f} |")
    summary[coll] = [round(min(ratios), 2), round(max(ratios), 2)]
    lines += ["", f"ratio range: {min(ratios):.2f}-{max(ratios):.2f}", ""]
over = []
for p in (1, 2, 3):
    m, _ = lat(f"overhead.mpi.{p}")
    t, _ = lat(f"overhead.passthrough.{p}")
    over.append((m[8], t[8]))
mm = statistics.median(x for x, _ in over)
tt = statistics.median(y for _, y in over)
summary["overhead_8B_us"] = {"mpich": round(mm, 3), "passthrough": round(tt, 3)}
lines += ["## 8 B allreduce passed through (CB_ENGINE=off)", "",
          f"MPICH {mm:.3f} us, through the library {tt:.3f} us (median of 3 interleaved pairs: "
          + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in over) + ")", ""]
summary["machine"] = doc.get("environment", {}).get("hosts")
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(lines))
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)
print("\n".join(lines))
