#!/usr/bin/env python3
"""Tables and plots of scripts/compare_mpis.sh's run: compare_mpis.py OUTDIR

Reads OUTDIR/<coll>.<series>.<pass>[.c<chunk>].json (series: mpi-<MPI>, engine-<MPI>,
engine-plain-<MPI>, preload-<MPI>; a chunk is one size range, run by every series back to
back) and OUTDIR/copy_bw.json. Writes OUTDIR/comparison.md: per collective, each series'
average latency (us; the median over passes of each pass's reported figure) and the
engine's time / the fastest library's at each size, taken within each pass (the fastest
library of that pass, run minutes apart at most) and the median over passes: this VM's
speed drifts over minutes, so a ratio of two medians taken at different times could
mislead; and
OUTDIR/plots/<coll>.png: bus bandwidth against size, one curve per series, with the
copy bound (cb_copybw, one thread). Needs matplotlib for the plots (Debian's
python3-matplotlib: /usr/bin/python3 is tried when this interpreter lacks it)."""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

NAME = re.compile(r"^(?P<coll>[a-z_]+)\.(?P<series>[a-z0-9-]+)\.(?P<pass>\d+)(\.c\d+)?\.json$")


def load(out):
    data = {}  # coll -> series -> bytes -> [ (latency, busbw, pass) ]
    libs = {}  # series -> library string
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        with open(path) as f:
            doc = json.load(f)
        series = m["series"]
        mpi = doc.get("environment", {}).get("mpi", {})
        libs[series] = " ".join(str(x) for x in (mpi.get("implementation"), mpi.get("version"))
                                if x) or mpi.get("library", "")
        for r in doc.get("results", []):
            lat = r.get("latency_us", {}).get("avg")
            if lat is None:
                continue
            data.setdefault(m["coll"], {}).setdefault(series, {}).setdefault(
                r["bytes"], []).append((lat, r.get("busbw_GBps"), int(m["pass"])))
    return data, libs


def fmt_size(b):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def per_pass_ratio(series, s, lib_names, b):
    """Median over passes of s's time / the fastest library's time in the same pass."""
    ratios = []
    for lat, _, p in series[s].get(b, []):
        libs_p = [x[0] for l in lib_names for x in series[l].get(b, []) if x[2] == p]
        if len(libs_p) == len(lib_names) and libs_p:
            ratios.append(lat / min(libs_p))
    return statistics.median(ratios) if ratios else None


def complete_passes(series, s, lib_names, b):
    """The passes in which s and every library ran at size b."""
    have = [{x[2] for x in series[n].get(b, [])} for n in [s, *lib_names]]
    return set.intersection(*have) if have else set()


def best_ratio(series, s, lib_names, b):
    """s's best pass over the fastest library's best pass (the issue's "best of 3"), over
    the passes in which every series ran."""
    passes = complete_passes(series, s, lib_names, b)
    mine = [x[0] for x in series[s].get(b, []) if x[2] in passes]
    libs = [x[0] for l in lib_names for x in series[l].get(b, []) if x[2] in passes]
    return min(mine) / min(libs) if mine and libs else None


# The size bands of the summary (the issues' tables).
BANDS = [(0, 1 << 10), ((1 << 10) + 1, 16 << 10), ((16 << 10) + 1, 256 << 10),
         ((256 << 10) + 1, 4 << 20), ((4 << 20) + 1, 1 << 62)]


def band_name(lo, hi, sizes):
    inside = [b for b in sizes if lo <= b <= hi]
    return f"{fmt_size(inside[0])}-{fmt_size(inside[-1])}" if inside else None


def table(coll, series, libs):
    names = sorted(series, key=lambda s: (not s.startswith("mpi-"), s))
    lib_names = [s for s in names if s.startswith("mpi-")]
    others = [s for s in names if not s.startswith("mpi-")]
    sizes = sorted({b for s in names for b in series[s]})
    med = {s: {b: statistics.median(x[0] for x in series[s][b]) for b in series[s]} for s in names}
    ratio = {s: {b: per_pass_ratio(series, s, lib_names, b) for b in sizes} for s in others}
    best = {s: {b: best_ratio(series, s, lib_names, b) for b in sizes} for s in others}
    head = ["size"] + [f"{s} (us)" for s in names] + ["fastest library"] + \
           [f"{s} / fastest" for s in others]
    lines = [f"### {coll}", "",
             "Libraries: " + ", ".join(f"`{s}` = {libs.get(s, '?')}" for s in lib_names), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for b in sizes:
        row = [fmt_size(b)]
        row += [f"{med[s][b]:.2f}" if b in med[s] else "" for s in names]
        have = [(med[s][b], s) for s in lib_names if b in med[s]]
        fastest = min(have) if have else None
        row.append(fastest[1][4:] if fastest else "")
        row += [f"{ratio[s][b]:.2f}" if ratio[s][b] is not None else "" for s in others]
        lines.append("| " + " | ".join(row) + " |")
    # The summary: per size band, the range of each ratio, within a pass (median over
    # passes) and best pass against best pass.
    bands = [(lo, hi, band_name(lo, hi, sizes)) for lo, hi in BANDS]
    bands = [x for x in bands if x[2]]
    lines += ["", f"Summary ({coll}): X / fastest library, per size band; within each pass "
              "(median over passes), and in brackets best pass over best pass", "",
              "| series | " + " | ".join(x[2] for x in bands) + " |",
              "|" + "---|" * (len(bands) + 1)]
    for s in others:
        cells = []
        for lo, hi, _ in bands:
            r = [ratio[s][b] for b in sizes if lo <= b <= hi and ratio[s][b] is not None]
            q = [best[s][b] for b in sizes if lo <= b <= hi and best[s][b] is not None]
            cell = f"{min(r):.2f}-{max(r):.2f}" if r else ""
            if q:
                cell += f" ({min(q):.2f}-{max(q):.2f})"
            cells.append(cell)
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines.append("")
    for s in others:
        behind = [f"{fmt_size(b)} ({ratio[s][b]:.2f}; best {best[s][b]:.2f})" for b in sizes
                  if ratio[s][b] is not None and ratio[s][b] > 1]
        lines.append(f"- `{s}` slower than the fastest library at: " +
                     (", ".join(behind) if behind else "no size"))
    return "\n".join(lines) + "\n"


def plot(out, coll, series, copy_bw):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for s in sorted(series, key=lambda s: (not s.startswith("mpi-"), s)):
        pts = sorted((b, statistics.median(x[1] for x in v)) for b, v in series[s].items()
                     if all(x[1] is not None for x in v))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                    ls="-" if s.startswith("mpi-") else "--", label=s)
    if copy_bw:
        sizes = sorted({b for v in series.values() for b in v})
        pts = [(b, copy_bw[b]) for b in sizes if b in copy_bw]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="grey", lw=1, ls=":",
                    label="copy bound (1 thread)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(f"{coll}, 2 ranks: each MPI's own, the engine, the preload")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    for ext in ("png",):  # PNG only: results/ stays within the device copy's 64 MiB
        fig.savefig(os.path.join(out, "plots", f"{coll}.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: compare_mpis.py OUTDIR (scripts/compare_mpis.sh's output)", file=sys.stderr)
        return 2
    out = argv[1]
    data, libs = load(out)
    if not data:
        print(f"compare_mpis.py: no <coll>.<series>.<pass>[.c<chunk>].json in {out}",
              file=sys.stderr)
        return 1
    copy_bw = {}
    try:
        with open(os.path.join(out, "copy_bw.json")) as f:
            copy_bw = {r["bytes"]: r["copy_GBps_1_thread"] for r in json.load(f)["results"]}
    except (OSError, KeyError, ValueError):
        pass
    md = ["# The engine against each MPI library (scripts/compare_mpis.sh)", "",
          "Average latency per size (median over passes); `X / fastest`: X's time over the "
          "fastest library's at that size in the same pass, the median over passes (below "
          "1: faster).", ""]
    plotted = True
    for coll in sorted(data):
        md.append(table(coll, data[coll], libs))
        plotted = plot(out, coll, data[coll], copy_bw) and plotted
    with open(os.path.join(out, "comparison.md"), "w") as f:
        f.write("\n".join(md))
    if not plotted:
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            return subprocess.call(["/usr/bin/python3", os.path.abspath(__file__), out])
        print("compare_mpis.py: no matplotlib: tables only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
