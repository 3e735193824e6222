#!/usr/bin/env python3
"""summary.md for run.sh's files: per size the preload/MPICH time ratio (each side the mean
of its two interleaved runs, each run the median of 3 passes), the busbw of each as a
fraction of the copy bound (README, "How each figure is computed"), the ratio at 1 B-64 KiB
with the benchmark's barrier left to MPICH (CB_BARRIER_ALGO=mpi), and the 8 B
interposition overhead (median of 5 interleaved pairs)."""
import json
import os
import statistics
import sys

out = sys.argv[1]


def load(name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)


def by_size(doc, key):
    """{bytes: figure}; "avg_latency_us" is OMB's average (latency_us.avg)."""
    get = (lambda r: r["latency_us"]["avg"]) if key == "avg_latency_us" else (lambda r: r.get(key))
    return {r["bytes"]: get(r) for r in doc["results"] if get(r) is not None}


copy = {r["bytes"]: r for r in load("copy_bw")["results"]}


def bound(size, coll, n=2):
    """GB/s a busbw is compared with: 1-thread copy rate for bcast, all-threads / n else."""
    below = [s for s in copy if s <= size] or [min(copy)]
    r = copy[max(below)]
    return r["copy_GBps_1_thread"] if coll == "bcast" else r["copy_GBps_all_threads"] / n


lines = ["# The engine under an unmodified MPI program (LD_PRELOAD), 2 ranks, this VM", "",
         "Made by `run.sh` here; time ratio = preload / plain MPICH (< 1: the preload is "
         "faster); busbw as a fraction of the copy bound (`copy_bw.json`).", ""]
summary = {}
for coll in ("allreduce", "bcast", "alltoall"):
    sides = {}
    for side in ("mpi", "preload"):
        runs = [by_size(load(f"{coll}.{side}.{p}"), "avg_latency_us") for p in (1, 2)]
        sizes = sorted(set(runs[0]) & set(runs[1]))
        sides[side] = {s: statistics.mean([r[s] for r in runs]) for s in sizes}
        bw = [by_size(load(f"{coll}.{side}.{p}"), "busbw_GBps") for p in (1, 2)]
        sides[side + "_bw"] = {s: statistics.mean([b[s] for b in bw]) for s in sizes if s in bw[0] and s in bw[1]}
    mb = [by_size(load(f"{coll}.preload-mpibarrier.{p}"), "avg_latency_us") for p in (1, 2)]
    sides["mpibarrier"] = {s: statistics.mean([r[s] for r in mb]) for s in set(mb[0]) & set(mb[1])}
    lines += [f"## {coll}", "", "| size | MPICH (us) | preload (us) | ratio | MPICH busbw / bound | preload busbw / bound | ratio, barrier MPICH's |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    rows = []
    for s in sorted(sides["mpi"]):
        if s not in sides["preload"]:
            continue
        ratio = sides["preload"][s] / sides["mpi"][s]
        fm = sides["mpi_bw"].get(s, 0) / bound(s, coll) if s >= 1024 else None
        fp = sides["preload_bw"].get(s, 0) / bound(s, coll) if s >= 1024 else None
        rb = sides["mpibarrier"][s] / sides["mpi"][s] if s in sides["mpibarrier"] else None
        rows.append({"bytes": s, "mpi_us": sides["mpi"][s], "preload_us": sides["preload"][s],
                     "ratio": ratio, "mpi_bound_fraction": fm, "preload_bound_fraction": fp,
                     "ratio_with_mpich_barrier": rb})
        f = (lambda x: "" if x is None else f"{x:.2f}")
        lines.append(f"| {s} | {sides['mpi'][s]:.2f} | {sides['preload'][s]:.2f} | {ratio:.2f} | {f(fm)} | {f(fp)} | {f(rb)} |")
    big = [r["ratio"] for r in rows if 1 << 20 <= r["bytes"] <= 64 << 20]
    worst = max(rows, key=lambda r: r["ratio"])
    small = [r["ratio_with_mpich_barrier"] for r in rows if r["ratio_with_mpich_barrier"]]
    lines += ["", f"1-64 MiB ratio: {min(big):.2f}-{max(big):.2f}; slowest size against MPICH: "
              f"{worst['bytes']} B at {worst['ratio']:.2f}; 1 B-64 KiB with the benchmark's "
              f"barrier left to MPICH: {min(small):.2f}-{max(small):.2f}.", ""]
    summary[coll] = rows
mpi = [by_size(load(f"overhead.mpi.{p}"), "avg_latency_us")[8] for p in range(1, 6)]
thru = [by_size(load(f"overhead.passthrough.{p}"), "avg_latency_us")[8] for p in range(1, 6)]
lines += ["## Interposition overhead, 8 B allreduce passed through (CB_ENGINE=off)", "",
          f"MPICH {statistics.median(mpi):.3f} us, through the preload {statistics.median(thru):.3f} us "
          f"(medians of 5 interleaved runs of 20,000 iterations): "
          f"{statistics.median(thru) - statistics.median(mpi):+.3f} us per call.",
          f"Runs: MPICH {', '.join(f'{x:.3f}' for x in mpi)}; preload {', '.join(f'{x:.3f}' for x in thru)}.", ""]
summary["overhead_8B_us"] = {"mpi": mpi, "passthrough": thru}
mpi = [by_size(load(f"tuned.mpi.{p}"), "avg_latency_us")[8] for p in range(1, 6)]
tuned = [by_size(load(f"tuned.preload.{p}"), "avg_latency_us")[8] for p in range(1, 6)]
lines += ["## 8 B bcast, which the tuning table hands to the MPI library", "",
          f"MPICH {statistics.median(mpi):.3f} us, through the preload {statistics.median(tuned):.3f} us "
          f"(medians of 5 interleaved runs of 20,000 iterations): "
          f"{statistics.median(tuned) - statistics.median(mpi):+.3f} us per call.",
          f"Runs: MPICH {', '.join(f'{x:.3f}' for x in mpi)}; preload {', '.join(f'{x:.3f}' for x in tuned)}.", ""]
mb = [by_size(load(f"tuned.preload-mpibarrier.{p}"), "avg_latency_us")[8] for p in range(1, 6)]
lines += [f"With the benchmark's untimed barrier between iterations left to MPICH too "
          f"(CB_BARRIER_ALGO=mpi): {statistics.median(mb):.3f} us "
          f"({statistics.median(mb) - statistics.median(mpi):+.3f} us against MPICH). Runs: "
          f"{', '.join(f'{x:.3f}' for x in mb)}.", ""]
summary["tuned_bcast_8B_us"] = {"mpi": mpi, "preload": tuned, "preload_mpi_barrier": mb}


def barrier_us(doc):
    return doc["results"][0]["latency_us"]["avg"]


bm = [barrier_us(load(f"barrier.mpi.{p}")) for p in range(1, 4)]
bp = [barrier_us(load(f"barrier.preload.{p}")) for p in range(1, 4)]
lines += ["## barrier", "",
          f"MPICH {statistics.median(bm):.3f} us, through the preload (engine shm barrier) "
          f"{statistics.median(bp):.3f} us: ratio {statistics.median(bp) / statistics.median(bm):.2f} "
          f"(medians of 3 interleaved runs). Runs: MPICH {', '.join(f'{x:.3f}' for x in bm)}; "
          f"preload {', '.join(f'{x:.3f}' for x in bp)}.", ""]
summary["barrier_us"] = {"mpi": bm, "preload": bp}
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(lines))
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)
print("\n".join(lines))
