#!/usr/bin/env python3
"""Tables and plots of scripts/compare_mpis.sh's run: compare_mpis.py OUTDIR

Reads OUTDIR/<coll>.<series>.<pass>[.c<chunk>].json (series: mpi-<MPI>, engine-<MPI>,
engine-plain-<MPI>, preload-<MPI>; a chunk is one size range; pass k of every series ran
in one round, in a shuffled order), OUTDIR/run.json (the run's git revision, seed, passes
and the runs that succeeded; only those files are read when it is there), a committed
run's OUTDIR/raw.tar.xz (raw/<coll>...json) where OUTDIR has none of them,
OUTDIR/copy_bw.json and OUTDIR/info.json (cb_info's floors, when it has them). The statistics are docs/statistics.md's, from scripts/cbstats.py:

- per collective, size and series: the median over passes of each pass's average latency,
  with the sign test's 95 % interval (null under 6 passes);
- the baseline at each size: the library with the lowest median there (the one a user
  would pick); every other series against it pass by pass (pass k of both ran in the same
  round, seconds apart, so a drift of the machine falls on both): the median of the
  per-pass ratios series / baseline (< 1: faster), its interval and the verdict (faster,
  slower, indistinguishable, too few passes).

Writes OUTDIR/comparison.json (all of it, every series, the libraries included, against the
baseline), OUTDIR/comparison.md generated from it (per collective: a table with each
series' median and interval and each non-library series' ratio, interval and verdict; a
summary by size band; every size where a non-library series is slower or
indistinguishable; the git revision measured, and whether the repository's HEAD has moved
since) and OUTDIR/plots/<coll>.png: bus bandwidth against size, one curve per series with
error bars from the intervals, the copy bound (cb_copybw, one thread) and the floor (cb_info:
the bus bandwidth at the floor's time). With floors, each table has a floor column (the
larger of k hand-offs and the bytes each rank must move at memcpy's rate, scripts/cbfloors.py)
(and one at the rate a thread gets while the other CPU copies too: both ranks copy at once)
and comparison.json each size's floor and each series' floor / median. Needs
matplotlib for the plots (Debian's python3-matplotlib: /usr/bin/python3 is tried when this
interpreter lacks it). An older run (no run.json, 3 passes in a fixed order) is read
alike: its intervals are null and its verdicts "too few passes"."""
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbfloors  # noqa: E402
import cbjson  # noqa: E402
import cbstats  # noqa: E402

NAME = re.compile(r"^(?P<coll>[a-z_]+)\.(?P<series>[a-z0-9-]+)\.(?P<pass>\d+)(\.c\d+)?\.json$")
LIB = "mpi-"


def is_library(series):
    return series.startswith(LIB)


def load_run(out):
    """run.json (None for an older run without one)."""
    try:
        with open(os.path.join(out, "run.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def binding_text(binding):
    """'rank 0 on CPU 0, rank 1 on CPU 1 (bound)' from a document's environment.binding (the
    CPUs each rank may run on, read back with sched_getaffinity), '?' where not recorded."""
    if not isinstance(binding, dict) or not binding.get("cpus_per_rank"):
        return "?"
    cpus = ", ".join(f"rank {r} on CPU {c}" if c.isdigit() else f"rank {r} on CPUs {c}"
                     for r, c in enumerate(binding["cpus_per_rank"]))
    return cpus + (" (bound)" if binding.get("bound") else " (not bound)")


def run_documents(out):
    """[(path, text)] of the runs' documents: OUTDIR/*.json as compare_mpis.sh writes them,
    or, in a committed run, its raw.tar.xz (raw/<coll>.<series>.<pass>.c<chunk>.json)."""
    paths = [p for p in sorted(glob.glob(os.path.join(out, "*.json")))
             if NAME.match(os.path.basename(p))]
    if not paths:
        return cbjson.packed_texts(out, "raw")
    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append((path, f.read()))
    return texts


def load(out, run=None, bindings=None, read=None):
    """coll -> series -> bytes -> pass -> (latency us, busbw GB/s or None); series -> library
    string. With run.json, only the files of its runs that succeeded (a file left from an
    earlier run in the same folder is not mixed in). bindings, a dict, gets series -> the
    set of binding_text() its runs had; read, a dict, gets "revisions" (the git revisions the
    documents measured) and "documents" (how many were read)."""
    data, libs = {}, {}
    wanted = None
    if run is not None:
        wanted = {r["file"] for r in run.get("runs", []) if r.get("status") == "ok"}
    for path, text in run_documents(out):
        base = os.path.basename(path)
        m = NAME.match(base)
        if not m or (wanted is not None and base not in wanted):
            continue
        doc = json.loads(text)
        series = m["series"]
        mpi = doc.get("environment", {}).get("mpi", {})
        libs[series] = " ".join(str(x) for x in (mpi.get("implementation"), mpi.get("version"))
                                if x) or mpi.get("library", "")
        if read is not None:
            read.setdefault("revisions", set()).add(
                doc.get("environment", {}).get("collbench", {}).get("git_revision"))
            read["documents"] = read.get("documents", 0) + 1
        if bindings is not None:
            bindings.setdefault(series, set()).add(
                binding_text(doc.get("environment", {}).get("binding")))
        for r in doc.get("results", []):
            lat = r.get("latency_us", {}).get("avg")
            if lat is None:
                continue
            data.setdefault(m["coll"], {}).setdefault(series, {}).setdefault(
                r["bytes"], {})[int(m["pass"])] = (lat, r.get("busbw_GBps"))
    return data, libs


fmt_size = cbjson.size_text


def interval_json(m):
    return None if m is None else [m["lo"], m["hi"]]


def analyse(series, coll=None, floors=None):
    """One collective: {"sizes": [{bytes, baseline, floor, series: {name: {...}}}]}. Each
    series' median and interval; each series other than the baseline against it, pass by
    pass over the passes where both ran; with floors (cbfloors.read_info), the floor at each
    size (null where none) and each series' floor / median."""
    names = sorted(series, key=lambda s: (not is_library(s), s))
    sizes = []
    for b in sorted({b for s in names for b in series[s]}):
        floor = cbfloors.at(floors, coll, b) if floors else None
        entry = {"bytes": b, "baseline": None, "floor": floor, "series": {}}
        for s in names:
            passes = series[s].get(b)
            if not passes:
                continue
            times = [passes[p][0] for p in sorted(passes)]
            m = cbstats.median_interval(times)
            entry["series"][s] = {
                "library": is_library(s), "passes": sorted(passes),
                "pass_us": times, "median_us": cbstats.median(times),
                "median_ci95_us": interval_json(m),
                "ci_confidence": None if m is None else m["confidence"]}
            if floor is not None:
                med = entry["series"][s]["median_us"]
                entry["series"][s]["floor_fraction"] = floor["floor_us"] / med
                if "both_cpus_floor_us" in floor:
                    entry["series"][s]["both_cpus_floor_fraction"] = \
                        floor["both_cpus_floor_us"] / med
        have = [(v["median_us"], s) for s, v in entry["series"].items() if v["library"]]
        if have:
            base = min(have)[1]
            entry["baseline"] = base
            bp = series[base][b]
            for s, v in entry["series"].items():
                if s == base:
                    continue
                both = sorted(set(bp) & set(series[s][b]))
                c = cbstats.compare_paired([bp[p][0] for p in both],
                                           [series[s][b][p][0] for p in both])
                v["versus"] = {"baseline": base, "passes": both, "pass_ratios": c["ratios"],
                               "ratio": c["ratio"], "ratio_ci95": interval_json(c["interval"]),
                               "confidence": None if c["interval"] is None
                               else c["interval"]["confidence"],
                               "verdict": c["verdict"]}
        sizes.append(entry)
    return {"series": names, "sizes": sizes}


# The size bands of the summary (the issues' tables).
BANDS = [(0, 1 << 10), ((1 << 10) + 1, 16 << 10), ((16 << 10) + 1, 256 << 10),
         ((256 << 10) + 1, 4 << 20), ((4 << 20) + 1, 1 << 62)]


def band_name(lo, hi, sizes):
    """The label of the sizes in [lo, hi]: "4-1K", or "64M" for a band of one size; None if
    the band holds none (also scripts/results_blocks.py's band columns)."""
    inside = [b for b in sizes if lo <= b <= hi]
    if not inside:
        return None
    a, z = fmt_size(inside[0]), fmt_size(inside[-1])
    return a if a == z else f"{a}-{z}"


def band_versus(result, s):
    """[(band label, [s's versus entries at the band's sizes])] over the BANDS that hold a
    size of the collective: the summaries' cells (here and scripts/results_blocks.py)."""
    sizes = [e["bytes"] for e in result["sizes"]]
    out = []
    for lo, hi in BANDS:
        label = band_name(lo, hi, sizes)
        if label:
            out.append((label, [e["series"][s]["versus"] for e in result["sizes"]
                                if lo <= e["bytes"] <= hi and "versus" in e["series"].get(s, {})]))
    return out


def fmt_us(v):
    ci = v["median_ci95_us"]
    text = f"{v['median_us']:.2f}"
    return text + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def fmt_ratio(vs, verdict=True):
    ci = vs["ratio_ci95"]
    text = f"{vs['ratio']:.2f}" if vs["ratio"] is not None else "-"
    if ci:
        text += f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return text + (f" {vs['verdict']}" if verdict else "")


def table(coll, result, libs, bindings=None):
    names = result["series"]
    lib_names = [s for s in names if is_library(s)]
    others = [s for s in names if not is_library(s)]
    sizes = [e["bytes"] for e in result["sizes"]]
    floors = any(e.get("floor") for e in result["sizes"])
    both = any("both_cpus_floor_us" in (e.get("floor") or {}) for e in result["sizes"])
    head = ["size"] + (["floor (us)"] if floors else []) + \
        (["floor, both CPUs (us)"] if both else []) + [f"{s} (us)" for s in names] + \
        ["fastest library"] + [f"{s} / fastest" for s in others]
    bound = bindings or {}
    lines = [f"### {coll}", "",
             "Libraries: " + ", ".join(f"`{s}` = {libs.get(s, '?')}" for s in lib_names), "",
             "Binding, as each rank read it back: " + "; ".join(
                 f"`{s}` {' / '.join(sorted(bound.get(s, {'?'})))}" for s in names), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in result["sizes"]:
        row = [fmt_size(e["bytes"])]
        if floors:
            row.append(f"{e['floor']['floor_us']:.3g}" if e.get("floor") else "")
        if both:
            row.append(f"{e['floor']['both_cpus_floor_us']:.3g}"
                       if "both_cpus_floor_us" in (e.get("floor") or {}) else "")
        row += [fmt_us(e["series"][s]) if s in e["series"] else "" for s in names]
        row.append(e["baseline"][len(LIB):] if e["baseline"] else "")
        row += [fmt_ratio(e["series"][s]["versus"])
                if "versus" in e["series"].get(s, {}) else "" for s in others]
        lines.append("| " + " | ".join(row) + " |")
    # Per size band: the range of the median ratios and how many sizes got each verdict.
    labels = [label for label, _ in band_versus(result, names[0])]
    lines += ["", f"Summary ({coll}): X / fastest library per size band, the range of the "
              "median per-pass ratios, and the verdicts (sizes)", "",
              "| series | " + " | ".join(labels) + " |",
              "|" + "---|" * (len(labels) + 1)]
    for s in others:
        cells = []
        for _, vs in band_versus(result, s):
            r = [v["ratio"] for v in vs if v["ratio"] is not None]
            cell = f"{min(r):.2f}-{max(r):.2f}" if r else ""
            counts = {}
            for v in vs:
                counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
            if counts:
                cell += " (" + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) + ")"
            cells.append(cell)
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines.append("")
    for s in others:
        at = {}
        for e in result["sizes"]:
            vs = e["series"].get(s, {}).get("versus")
            if vs:
                at.setdefault(vs["verdict"], []).append(f"{fmt_size(e['bytes'])} "
                                                        f"({fmt_ratio(vs, verdict=False)})")
        # Every size where s is not shown faster, each with its ratio and interval.
        parts = [f"slower at {', '.join(at[cbstats.SLOWER])}" if cbstats.SLOWER in at
                 else "slower at no size" + (" with a verdict" if cbstats.TOO_FEW in at else "")]
        if cbstats.SAME in at:
            parts.append(f"indistinguishable at {', '.join(at[cbstats.SAME])}")
        if cbstats.TOO_FEW in at:
            above = [f"{fmt_size(e['bytes'])} ({fmt_ratio(vs, verdict=False)})"
                     for e in result["sizes"]
                     for vs in [e["series"].get(s, {}).get("versus")]
                     if vs and vs["verdict"] == cbstats.TOO_FEW and vs["ratio"] is not None
                     and vs["ratio"] > 1]
            parts.append(f"too few passes for a verdict at {len(at[cbstats.TOO_FEW])} sizes, "
                         "the median ratio above 1 at "
                         + (", ".join(above) if above else "none of them"))
        faster = len(at.get(cbstats.FASTER, []))
        parts.append(f"faster at {faster} of {sum(len(v) for v in at.values())} sizes")
        lines.append(f"- `{s}` against the fastest library: " + "; ".join(parts))
    return "\n".join(lines) + "\n"


def plot(out, coll, series, copy_bw, result=None):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for s in sorted(series, key=lambda s: (not is_library(s), s)):
        pts = []
        for b, v in sorted(series[s].items()):
            bw = [x[1] for x in v.values()]
            if all(x is not None for x in bw):
                m = cbstats.median_interval(bw)
                mid = cbstats.median(bw)
                pts.append((b, mid, mid - m["lo"] if m else 0.0, m["hi"] - mid if m else 0.0))
        if pts:
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                        yerr=[[p[2] for p in pts], [p[3] for p in pts]], marker="o", ms=3,
                        capsize=2, elinewidth=0.8, ls="-" if is_library(s) else "--", label=s)
    if copy_bw:
        sizes = sorted({b for v in series.values() for b in v})
        pts = [(b, copy_bw[b]) for b in sizes if b in copy_bw]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="grey", lw=1, ls=":",
                    label="copy bound (1 thread)")
    # The floor as bus bandwidth: a series' busbw x its median time / the floor's time (the
    # same bytes, so the same factor), from the fastest library's median at each size.
    pts = []
    for e in (result or {}).get("sizes", []):
        base = series.get(e["baseline"] or "", {}).get(e["bytes"])
        if e.get("floor") and base and all(v[1] for v in base.values()):
            bw = cbstats.median([v[1] for v in base.values()])
            t = cbstats.median([v[0] for v in base.values()])
            pts.append((e["bytes"], bw * t / e["floor"]["floor_us"]))
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black", lw=1, ls="-.",
                label="floor (cb_info: k hand-offs, memcpy)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s): median, 95 % interval")
    ax.set_title(f"{coll}, 2 ranks: each MPI's own, the engine, the preload")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    for ext in ("png",):  # PNG only: results/ stays within the device copy's 64 MiB
        fig.savefig(os.path.join(out, "plots", f"{coll}.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


def head_revision():
    """The repository's current HEAD (None outside a git checkout)."""
    try:
        p = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                            "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None


def provenance(run, head):
    """The lines that say what was measured, when, where and in which order."""
    if run is None:
        return ["An older run: no run.json, so neither the git revision nor the order of "
                "the runs is known (it was fixed, not shuffled); under 6 passes there are "
                "no intervals and the verdicts say \"too few passes\"."]
    git = run.get("git", {})
    rev = git.get("revision", "unknown")
    machine = run.get("machine", {})
    line = (f"Measured at git revision `{rev}`"
            + (" (the tree had uncommitted changes)" if git.get("dirty") else "")
            + f" on {machine.get('hostname', '?')} ({machine.get('nproc', '?')} cores), "
            f"{run.get('start', '?')} to {run.get('end', '?')}; {run.get('passes', '?')} "
            f"passes, each round's order shuffled (seed {run.get('seed', '?')}: "
            f"`CB_SEED={run.get('seed', '?')}` repeats it)"
            + ("" if run.get("complete", True) else "; the run did not finish") + ".")
    lines = [line]
    failed = [r["file"] for r in run.get("runs", []) if r.get("status") != "ok"]
    if failed:
        lines.append(f"Runs that failed and are left out ({len(failed)}): "
                     + ", ".join(f"`{f}`" for f in failed) + ".")
    if head and rev not in ("unknown", head):
        lines.append(f"The tree has changed since: the repository's HEAD is now `{head}`.")
    return lines


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: compare_mpis.py OUTDIR (scripts/compare_mpis.sh's output)", file=sys.stderr)
        return 2
    out = argv[1]
    run = load_run(out)
    bindings = {}
    try:
        data, libs = load(out, run, bindings)
    except cbjson.InputError as e:
        print(f"compare_mpis.py: {e}", file=sys.stderr)
        return 2
    if not data:
        print(f"compare_mpis.py: no <coll>.<series>.<pass>[.c<chunk>].json in {out} "
              "(nor in its raw.tar.xz)", file=sys.stderr)
        return 1
    copy_bw = {}
    try:
        with open(os.path.join(out, "copy_bw.json")) as f:
            copy_bw = {r["bytes"]: r["copy_GBps_1_thread"] for r in json.load(f)["results"]}
    except (OSError, KeyError, ValueError):
        pass
    floors = None
    if os.path.exists(os.path.join(out, "info.json")):
        try:
            floors = cbfloors.read_info(os.path.join(out, "info.json"))
        except cbjson.InputError as e:
            print(f"compare_mpis.py: no floors: {e}", file=sys.stderr)
    results = {coll: analyse(data[coll], coll, floors) for coll in sorted(data)}
    head = head_revision()
    doc = {"schema": "collbench.compare_mpis.comparison/1",
           "run": None if run is None else {k: run.get(k) for k in
                                            ("git", "seed", "passes", "start", "end",
                                             "machine", "complete")},
           "head_revision": head, "libraries": libs,
           "floors": None if floors is None else {
               "info": "info.json", "mode": floors.get("mode"),
               "one_way_ns": floors["handoff"].get("one_way_ns"),
               "ranks_cpus": floors["handoff"].get("ranks_cpus")},
           "bindings": {s: sorted(b) for s, b in sorted(bindings.items())},
           "collectives": results}
    with open(os.path.join(out, "comparison.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    md = ["# The engine against each MPI library (scripts/compare_mpis.sh)", "",
          *provenance(run, head), "",
          "Latency: the median over passes of each pass's average (us), with its 95 % "
          "interval (sign test, docs/statistics.md; none under 6 passes). `X / fastest`: "
          "against the library with the lowest median at that size, pass by pass (pass k "
          "of both ran in the same round): the median of the per-pass ratios X / library "
          "(below 1: X is faster), its 95 % interval and the verdict (faster or slower when "
          "the interval excludes 1, indistinguishable when it holds 1). Generated from "
          "comparison.json.", ""]
    if floors is not None:
        md += [f"Floors (cb_info, `info.json`): one-way cache-line hand-off "
               f"{cbfloors.one_way_text(floors)}. `floor`: the larger of k hand-offs (2 for "
               "allreduce and alltoall, 1 for bcast) and the bytes each rank must read and "
               "write at one thread's memcpy rate (docs/plots.md, \"cb_info's floors\"); "
               "none for collectives without one." + (
                   " `floor, both CPUs`: the same at the rate a thread gets while the other "
                   "CPU copies too, as both ranks do."
                   if any("both_cpus_memcpy_GBps" in r for r in floors["bandwidth"]["rows"])
                   else ""), ""]
    plotted = True
    for coll in sorted(data):
        md.append(table(coll, results[coll], libs,
                        {s: bindings.get(s, {"?"}) for s in results[coll]["series"]}))
        plotted = plot(out, coll, data[coll], copy_bw, results[coll]) and plotted
    with open(os.path.join(out, "comparison.md"), "w") as f:
        f.write("\n".join(md))
    if not plotted:
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            return subprocess.call(["/usr/bin/python3", os.path.abspath(__file__), out])
        print("compare_mpis.py: no matplotlib: tables only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
