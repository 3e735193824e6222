#!/usr/bin/env python3
"""Summarises scripts/small_path_scale.sh's documents (issue 39, "Scale"): per collective,
rank count and size, the small algorithm's time, the engine's next choice's and MPICH's,
each the median of every pass of every launch with its 95 % interval (scripts/cbstats.py),
the next algorithm against small paired pass by pass (both ran in the same pass of one
launch), MPICH against small as the ratio of the medians (other launches: not paired), and
the small path's per-rank work by the model of docs/architecture.md ("The small-message
path": counters polled, peer blocks read, bytes read).

Usage: small_path_scale.py DIR (DIR/raw/*.json, or DIR/raw.tar.xz) writes DIR/summary.md and
DIR/summary.json; --check exits 1 where small loses to the next algorithm (the paired
interval lies below 1) at more than 2 ranks."""
import argparse
import json
import os
import re
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbstats  # noqa: E402

NAME = re.compile(r"(?:^|/)(allreduce|bcast|alltoall)\.np(\d+)\.(eng|mpi)\.pass(\d+)\.json$")


def documents(folder):
    """(coll, ranks, launch kind, pass, document) of every document in folder."""
    raw, packed = os.path.join(folder, "raw"), os.path.join(folder, "raw.tar.xz")
    if os.path.isdir(raw):
        for name in sorted(os.listdir(raw)):
            m = NAME.search(name)
            if m:
                with open(os.path.join(raw, name)) as f:
                    yield m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), json.load(f)
    elif os.path.exists(packed):
        with tarfile.open(packed) as t:
            for member in sorted(t.getmembers(), key=lambda x: x.name):
                m = NAME.search(member.name)
                if m and member.isfile():
                    doc = json.load(t.extractfile(member))
                    yield m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), doc
    else:
        sys.exit(f"small_path_scale.py: no {raw} and no {packed}")


def model(coll, n, b):
    """The small path's work per rank and operation (docs/architecture.md): counters polled
    (the waiting ranks'), blocks read from peers' slots and bytes read, for n ranks and b
    bytes (alltoall: per peer)."""
    if coll == "bcast":  # the root waits for every peer to be past seq-1; the others for it
        return {"counters": f"root {n - 1}, others 1", "blocks": 1, "bytes_read": b}
    # allreduce: every rank's vector; alltoall: its block of every rank's row
    return {"counters": n - 1, "blocks": n, "bytes_read": n * b}


def summarise(folder):
    series = {}  # (coll, n, bytes, name) -> [pass times]; names: small, next algos, mpi
    paired = {}  # (coll, n, bytes, algo) -> [algo / small per pass]
    launches = {}
    for coll, n, kind, _, doc in documents(folder):
        launches[(coll, n, kind)] = launches.get((coll, n, kind), 0) + 1
        by_size = {}
        for r in doc["results"]:
            name = r.get("algo") if kind == "eng" else "mpi"
            passes = r["repeat"]["pass_us"]
            series.setdefault((coll, n, r["bytes"], name), []).extend(passes)
            by_size.setdefault(r["bytes"], {})[name] = passes
        for size, got in by_size.items():
            for name, passes in got.items():
                if name not in ("small", "mpi") and "small" in got:
                    ratios = cbstats.compare_paired(got["small"], passes)["ratios"]
                    paired.setdefault((coll, n, size, name), []).extend(ratios)
    rows = []
    for coll, n, size in sorted({k[:3] for k in series}):
        small = series.get((coll, n, size, "small"))
        others = sorted(k[3] for k in series if k[:3] == (coll, n, size) and
                        k[3] not in ("small", "mpi"))
        row = {"coll": coll, "ranks": n, "bytes": size, "model": model(coll, n, size),
               "small": cbstats.median_interval(small) if small else None, "next": {},
               "mpi": None}
        for name in others:
            ratios = paired.get((coll, n, size, name), [])
            interval = cbstats.median_interval(ratios)
            row["next"][name] = {"time": cbstats.median_interval(series[(coll, n, size, name)]),
                                 "ratio_to_small": cbstats.median(ratios) if ratios else None,
                                 "interval": interval, "verdict": cbstats.verdict(interval),
                                 "pairs": len(ratios)}
        if (coll, n, size, "mpi") in series:
            mpi = cbstats.median_interval(series[(coll, n, size, "mpi")])
            row["mpi"] = {"time": mpi, "ratio_to_small":
                          mpi["median"] / row["small"]["median"] if mpi and row["small"] else None}
        rows.append(row)
    return {"launches": {f"{c} np={n} {k}": v for (c, n, k), v in sorted(launches.items())},
            "rows": rows}


def us(t):
    return "-" if not t else f"{t['median']:.3g} [{t['lo']:.3g}, {t['hi']:.3g}]"


def markdown(s):
    out = ["Generated by scripts/small_path_scale.py from the documents in raw.tar.xz "
           "(every figure a median over every pass of every launch, us, with its 95 % "
           "interval; next/small: paired per-pass ratio, > 1: small faster; MPICH/small: ratio "
           "of medians, other launches). Yield mode on 2 cores: the times measure scheduling "
           "as much as the algorithms.", "",
           "| coll | ranks | bytes | small us | next algorithm: us, next/small [interval] | "
           "MPICH 4.0.2 us | MPICH/small | small per rank: counters, blocks, bytes read |",
           "|---|---|---|---|---|---|---|---|"]
    for r in s["rows"]:
        nxt = "; ".join(f"{a}: {us(v['time'])}, {v['ratio_to_small']:.2f} "
                        f"[{v['interval']['lo']:.2f}, {v['interval']['hi']:.2f}]"
                        if v["interval"] else f"{a}: {us(v['time'])}"
                        for a, v in r["next"].items()) or "-"
        m = r["model"]
        mpi = r["mpi"] or {}
        ratio = f"{mpi['ratio_to_small']:.2f}" if mpi.get("ratio_to_small") else "-"
        out.append(f"| {r['coll']} | {r['ranks']} | {r['bytes']} | {us(r['small'])} | {nxt} | "
                   f"{us(mpi.get('time'))} | {ratio} | {m['counters']}, {m['blocks']}, "
                   f"{m['bytes_read']} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    s = summarise(a.folder)
    with open(os.path.join(a.folder, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")
    with open(os.path.join(a.folder, "summary.md"), "w") as f:
        f.write(markdown(s))
    if a.check:
        losses = [(r["coll"], r["ranks"], r["bytes"], name) for r in s["rows"] if r["ranks"] > 2
                  for name, v in r["next"].items() if v["verdict"] == cbstats.FASTER]
        for l in losses:
            print("small loses: %s at %d ranks, %d B, to %s" % l)
        return 1 if losses else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
