#!/usr/bin/env python3
"""The generated tables of the READMEs under results/: every number of a run's README comes
from the run's JSON through a block here, never from a hand-typed figure (issue 36).

A README marks each table with

  <!-- BEGIN generated: NAME (scripts/results_blocks.py; do not edit) -->
  ...
  <!-- END generated -->

and BLOCKS below says, per README (relative to results/) and NAME, which kind of table it is
and from which files. scripts/readme_results.py --write/--check rewrites or checks every
block, with README.md's own section. Paths are relative to the README's folder.

Kinds (each reads only the documents it names):
- ratios: rows of (label, numerator glob, denominator glob); each glob matches one file per
  round (sorted names pair round k with round k); per size, numerator time / denominator
  time, the median over rounds, and "~" where the two sides' --repeat pass ranges overlap
  (the difference is within the run's own spread). Columns: given sizes, or size bands
  (then the cell is the range over the band's sizes).
- compare: a scripts/compare_mpis.sh folder, through compare_mpis.py's own analysis: per
  collective and series, the median per-pass ratio to the fastest library per size band,
  the verdicts, and the sizes where the ratio is above 1.
- replay: step times (ms) of replay documents, numerator and denominator, and their ratio.
- latency: one size's time (us), a matrix of rows and columns naming the files of each
  cell, the median over them.
- verdicts: a scripts/compare_mpis.sh folder size by size: the fastest library's median
  and interval, each series' ratio to it with its interval and verdict.
- link_model: engine algorithms measured across a link (`--algo all`, one document per
  pass) beside the alpha-beta model fitted to cb_latency on that link (scripts/model.py),
  and the tuning table's choice against the fastest algorithm (scripts/cluster_link.sh).
A time is the record's --repeat median pass (`repeat.median_us`) where it has one, else its
average (`latency_us.avg`; a replay's `step_us.avg`)."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402
import cbstats  # noqa: E402
import compare_mpis  # noqa: E402  (scripts/: the comparison's own analysis, not a second copy)

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
BEGIN = "<!-- BEGIN generated: "
BEGIN_TAIL = " (scripts/results_blocks.py; do not edit) -->"
END = "<!-- END generated -->"

fmt_size = cbjson.size_text


class BlockError(Exception):
    """A block whose files are missing or unreadable: str(e) names the README and block."""


def _load(path):
    with open(path) as f:
        return json.load(f)


def _files(folder, pattern):
    paths = sorted(glob.glob(os.path.join(folder, pattern)))
    if not paths:
        raise BlockError(f"no file matches {pattern!r} in {os.path.relpath(folder, RESULTS)}")
    return paths


def _time(rec):
    """(time us, pass low, pass high) of one record."""
    rep = rec.get("repeat")
    if rep and rep.get("median_us") is not None:
        return rep["median_us"], rep.get("min_us", rep["median_us"]), rep.get("max_us",
                                                                             rep["median_us"])
    lat = rec.get("step_us") or rec.get("latency_us")
    return lat["avg"], lat["avg"], lat["avg"]


def _times(path):
    """{bytes: (time, low, high)} of a document's records (the first of each size)."""
    out = {}
    for r in _load(path).get("results", []):
        if r.get("bytes") is not None and r["bytes"] not in out:
            out[r["bytes"]] = _time(r)
    return out


def _revisions(paths):
    revs = set()
    for p in paths:
        rev = _load(p).get("environment", {}).get("collbench", {}).get("git_revision")
        if rev:
            revs.add(rev)
    return revs


def _ratio_cells(folder, num, den):
    """{bytes: (median ratio over rounds, ranges overlap in every round)}."""
    nums, dens = _files(folder, num), _files(folder, den)
    if len(nums) != len(dens):
        raise BlockError(f"{num!r} matches {len(nums)} files, {den!r} {len(dens)}: rounds "
                         "cannot be paired")
    per_size = {}
    for n_path, d_path in zip(nums, dens):
        n, d = _times(n_path), _times(d_path)
        for b in sorted(set(n) & set(d)):
            (tn, ln, hn), (td, ld, hd) = n[b], d[b]
            per_size.setdefault(b, []).append((tn / td, ln <= hd and ld <= hn))
    return {b: (cbstats.median([r for r, _ in v]), all(o for _, o in v))
            for b, v in per_size.items()}, nums + dens


def _cell(ratio, overlap):
    return f"{ratio:.2f}" + ("~" if overlap else "")


def ratios(folder, rows, sizes=None, bands=None, corner=""):
    cells, paths = {}, []
    for label, num, den in rows:
        cells[label], used = _ratio_cells(folder, num, den)
        paths += used
    all_sizes = sorted({b for c in cells.values() for b in c})
    if bands:
        cols = [(lo, hi, compare_mpis.band_name(lo, hi, all_sizes)) for lo, hi in bands]
        cols = [c for c in cols if c[2]]
    else:
        cols = [(b, b, fmt_size(b)) for b in sizes]
    lines = [f"| {corner} | " + " | ".join(c[2] for c in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for label, _, _ in rows:
        row = []
        for lo, hi, _ in cols:
            got = [cells[label][b] for b in sorted(cells[label]) if lo <= b <= hi]
            if not got:
                row.append("")
            elif len(got) == 1:
                row.append(_cell(*got[0]))
            else:
                rs = [r for r, _ in got]
                row.append(f"{min(rs):.2f}-{max(rs):.2f}")
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    return lines, paths


def latency(folder, rows, cols, pattern, size):
    """A matrix of one size's time (us): pattern.format(row=, col=) names the files of a
    cell, the median over them (rounds or passes)."""
    lines = [f"| {fmt_size(size)}, us | " + " | ".join(cols) + " |",
             "|---|" + "---:|" * len(cols)]
    paths = []
    for row in rows:
        cells = []
        for col in cols:
            files = _files(folder, pattern.format(row=row, col=col))
            ts = [t[size][0] for t in map(_times, files) if size in t]
            paths += files
            cells.append(f"{cbstats.median(ts):.2f}" if ts else "")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return lines, paths


def replay(folder, rows):
    lines = ["| input | compute | engine (ms) | mpi (ms) | engine / mpi |",
             "|---|---|---:|---:|---:|"]
    paths = []
    for label, compute, num, den in rows:
        n, d = _files(folder, num), _files(folder, den)
        paths += n + d
        tn = cbstats.median([_time(_load(p)["results"][0])[0] for p in n]) / 1000
        td = cbstats.median([_time(_load(p)["results"][0])[0] for p in d]) / 1000
        lines.append(f"| {label} | {compute} | {tn:.0f} | {td:.0f} | {tn / td:.2f} |")
    return lines, paths


def compare(folder, series, colls=None):
    run = compare_mpis.load_run(folder)
    read = {}
    data, _ = compare_mpis.load(folder, run, read=read)
    if not data:
        raise BlockError(f"no compare_mpis.sh output in {os.path.relpath(folder, RESULTS)}")
    lines = []
    behind = []
    for coll in colls or sorted(data):
        result = compare_mpis.analyse(data[coll])
        for s in series:
            if s not in result["series"]:
                continue
            per_band = compare_mpis.band_versus(result, s)
            if not lines:
                lines = ["| collective, series | " + " | ".join(b for b, _ in per_band) + " |",
                         "|---|" + "---|" * len(per_band)]
            row = []
            for _, vs in per_band:
                r = [v["ratio"] for v in vs if v["ratio"] is not None]
                row.append(f"{min(r):.2f}-{max(r):.2f}" if r else "")
            lines.append(f"| {coll}, {s} | " + " | ".join(row) + " |")
            vs = {e["bytes"]: e["series"][s]["versus"] for e in result["sizes"]
                  if "versus" in e["series"].get(s, {}) and
                  e["series"][s]["versus"]["ratio"] is not None}
            verdicts = {}
            for v in vs.values():
                verdicts[v["verdict"]] = verdicts.get(v["verdict"], 0) + 1
            def at(verdict):
                return ", ".join(f"{fmt_size(b)} ({compare_mpis.fmt_ratio(v, False)})"
                                 for b, v in sorted(vs.items()) if v["verdict"] == verdict)
            above = [f"{fmt_size(b)} ({v['ratio']:.2f})" for b, v in sorted(vs.items())
                     if v["ratio"] > 1]
            behind.append(f"- {coll}, `{s}`: verdicts "
                          + ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items()))
                          + "; median ratio above 1 at "
                          + (", ".join(above) if above else "no size")
                          + (f"; **slower** at {at('slower')}" if verdicts.get("slower") else "")
                          + (f"; indistinguishable at {at('indistinguishable')}"
                             if verdicts.get("indistinguishable") else ""))
    # The documents load() read (loose or packed in raw.tar.xz), parsed once there.
    return lines + ["", *behind], {"revisions": read["revisions"] - {None},
                                   "documents": read["documents"]}


def omb(folder, bands):
    """scripts/omb_compare.py's summary: per benchmark and size band, the range of the
    median per-round ratios collbench / OMB and the verdicts against its tolerance."""
    path = os.path.join(folder, "omb_compare.json")
    doc = _load(path)
    lines = ["| collbench / OMB | " + " | ".join(
        f"{fmt_size(lo)}-{fmt_size(hi)}" for lo, hi in bands) + " |",
        "|---|" + "---|" * len(bands)]
    for bench, res in doc["benchmarks"].items():
        cells = []
        for lo, hi in bands:
            es = [e for e in res["sizes"] if lo <= e["bytes"] <= hi]
            if not es:
                cells.append("")
                continue
            r = [e["ratio"] for e in es]
            counts = {}
            for e in es:
                counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
            cells.append(f"{min(r):.2f}-{max(r):.2f} ("
                         + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) + ")")
        lines.append(f"| {bench} | " + " | ".join(cells) + " |")
    run = doc.get("run", {})
    return [f"OMB {run.get('omb_version', '?')}, {run.get('rounds', '?')} rounds, tolerance "
            f"+-{doc['tolerance_pct']:g} %.", "", *lines], \
        sorted(glob.glob(os.path.join(folder, "cb_*.json")))  # collbench's revision


def verdicts(folder, series, colls=None):
    """A scripts/compare_mpis.sh folder size by size, through compare_mpis.py's analysis:
    per collective and size, the fastest library's median and 95 % interval, and each
    series' per-pass ratio to it with its interval and verdict."""
    run = compare_mpis.load_run(folder)
    read = {}
    data, libs = compare_mpis.load(folder, run, read=read)
    if not data:
        raise BlockError(f"no compare_mpis.sh output in {os.path.relpath(folder, RESULTS)}")
    lines = ["Libraries: " + ", ".join(f"`{s}` = {libs[s]}" for s in sorted(libs)
                                       if compare_mpis.is_library(s)) + "."]
    for coll in colls or sorted(data):
        result = compare_mpis.analyse(data[coll])
        shown = [s for s in series if s in result["series"]]
        lines += ["", f"{coll}:", "", "| size | fastest library, us | "
                  + " | ".join(f"{s} / fastest" for s in shown) + " |",
                  "|---|---|" + "---|" * len(shown)]
        for e in result["sizes"]:
            base = e["series"].get(e["baseline"] or "")
            row = [fmt_size(e["bytes"]),
                   f"{e['baseline'][len(compare_mpis.LIB):]} {compare_mpis.fmt_us(base)}"
                   if base else ""]
            row += [compare_mpis.fmt_ratio(e["series"][s]["versus"])
                    if "versus" in e["series"].get(s, {}) else "" for s in shown]
            lines.append("| " + " | ".join(row) + " |")
    return lines, {"revisions": read["revisions"] - {None}, "documents": read["documents"]}


def _pass_times(texts, coll=None):
    """{algo: {bytes: {pass: latency us}}} of `--algo all` documents named
    <coll>.<pass>.json (coll None: every document)."""
    out, revs = {}, set()
    for path, text in texts:
        parts = os.path.basename(path).split(".")
        if len(parts) != 3 or (coll is not None and parts[0] != coll):
            continue
        doc = json.loads(text)
        revs.add(doc.get("environment", {}).get("collbench", {}).get("git_revision"))
        for r in doc.get("results", []):
            t = cbjson.METRICS["latency"].get(r)
            if t is not None and r.get("algo"):
                out.setdefault(r["algo"], {}).setdefault(r["bytes"], {})[int(parts[1])] = t
    return out, revs


def _fmt_time(us):
    return f"{us:.3g}" if us < 1000 else f"{us:,.0f}"


def link_model(folder, latency, bw, algos, colls, choices=None, model_times=True):
    """The alpha-beta model beside the measurement across one link (scripts/model.py's cost
    formulas and least squares): alpha and beta fitted to cb_latency between the hosts
    (T = alpha + beta m), gamma pooled over the allreduce runs with those fixed (as model.py
    pools it); per collective and size each engine algorithm's median over the passes of
    `--algo all` (packed in ALGOS.tar.xz, <coll>.<pass>.json) with its 95 % interval and
    the model's time, the fastest algorithm, and the algorithm the engine's tuning table
    chose there (`choices`: the compare folder's engine series) against it, pass by pass.
    `hierarchical` costs as the algorithm it runs among the node leaders at one rank per
    node (recursive doubling or binomial up to the table's hierarchical_*_small_bytes, as
    the documents record it, ring or scatter-allgather above); `mpi` as the best of the
    formulas (what a library could reach). choices None: no such columns; model_times
    False: the link's parameters only, no model column (ranks on a node talk through shared
    memory, which the link's alpha and beta do not describe)."""
    import model  # scripts/model.py: the formulas and the fit, not a second copy
    lat_path = _files(folder, latency)[0]
    lat_doc = _load(lat_path)
    samples = [model.Sample(r["bytes"], model.pt2pt(2, r["bytes"]),
                            cbjson.METRICS["latency"].get(r))
               for r in lat_doc["results"] if cbjson.METRICS["latency"].get(r)]
    # Hockney's own measurement: beta the rate the link sustains, cb_bw's at its largest
    # size (MB/s = bytes/us); alpha cb_latency's one-way time at its smallest size
    bw_path = _files(folder, bw)[0]
    bw_recs = _load(bw_path)["results"]
    sustained = max(bw_recs, key=lambda r: r["bytes"])
    peak = max(r["bandwidth_MBps"] for r in bw_recs)
    smallest = min(samples, key=lambda x: x.bytes)
    net = model.Params(smallest.time_us, 1 / sustained["bandwidth_MBps"], None)
    texts = cbjson.packed_texts(folder, algos)
    if not texts:
        raise BlockError(f"no {algos}/*.json nor {algos}.tar.xz in "
                         f"{os.path.relpath(folder, RESULTS)}")
    revs = _pass_times(texts)[1]
    first = json.loads(texts[0][1])
    tuning = first.get("backend", {}).get("tuning", {}).get("parameters", {})
    env = first.get("environment", {})
    ranks, per_node = env.get("nranks"), env.get("max_ranks_per_node")
    if not isinstance(ranks, int) or ranks < 2:
        raise BlockError(f"{texts[0][0]}: environment.nranks is missing")
    pooled = []
    for name, formula in model.FORMULAS["allreduce"].items():
        for b, passes in _pass_times(texts, "allreduce")[0].get(name, {}).items():
            pooled += [model.Sample(b, formula(ranks, b), t) for t in passes.values()
                       if formula(ranks, b) is not None]
    gamma = model.least_squares(pooled, ("gamma",), net._replace(gamma=None)).gamma \
        if pooled else None
    params = net._replace(gamma=gamma)
    err = model.error_summary(model.relative_errors(samples, net))
    lines = [f"The link: beta {net.beta * 1e3:.2f} ns/B, the rate cb_bw sustains at "
             f"{fmt_size(sustained['bytes'])} ({sustained['bandwidth_MBps']:.1f} MB/s; its "
             f"peak over all sizes {peak:.1f} MB/s; `{os.path.relpath(bw_path, folder)}`); "
             f"alpha {net.alpha:.2f} us, cb_latency's one-way time at {fmt_size(smallest.bytes)} "
             f"(`{os.path.relpath(lat_path, folder)}`; T = alpha + beta m misses its sizes by " + ", ".join(
                 f"{e['rms_pct']:.0f} % ({name})" for name, e in err.items()
                 if name != "all" and e["rms_pct"] is not None)
             + " RMS); gamma (reduction) "
             + (f"{gamma * 1e3:.3f} ns/B, pooled over the allreduce runs" if gamma is not None
                else "unknown") + (f". Model: scripts/model.py's cost formulas at {ranks} ranks."
                                   if model_times else
                                   f". {ranks} ranks, {per_node} per node: no model column."),
             ""]

    def predict(coll, algo, b):
        formulas = model.FORMULAS.get(coll, {})
        if algo == "hierarchical":
            if per_node != 1 or f"hierarchical_{coll}_small_bytes" not in tuning:
                return None  # a node's shared-memory phases: not in the model
            small = b <= tuning[f"hierarchical_{coll}_small_bytes"]  # one rank per node:
            algo = {"allreduce": "recursive_doubling" if small else "ring",  # leaders only
                    "bcast": "binomial" if small else "scatter_allgather"}[coll]
        if algo == "mpi":
            ts = [c.time(params) for c in (f(ranks, b) for f in formulas.values()) if c]
            ts = [t for t in ts if t is not None]
            return min(ts) if ts else None
        if algo == "linear" and coll == "alltoall":
            algo = "pairwise"  # at 2 ranks the same one exchange
        f = formulas.get(algo)
        cost = f(ranks, b) if f else None
        return cost.time(params) if cost else None

    choices = choices or (None, [])
    chosen = {}  # series -> coll -> bytes -> the algorithm the engine ran
    for path, text in (compare_mpis.run_documents(os.path.join(folder, choices[0]))
                       if choices[0] else []):
        m = compare_mpis.NAME.match(os.path.basename(path))
        if m and m["series"] in choices[1]:
            for r in json.loads(text).get("results", []):
                chosen.setdefault(m["series"], {}).setdefault(m["coll"], {})[r["bytes"]] = \
                    r.get("algo")
    for coll in colls:
        times, _ = _pass_times(texts, coll)
        names = sorted(times)
        lines += [f"{coll} (us: median [95 % interval] over the passes"
                  + ("; model" if model_times else "") + "):", "",
                  "| size | " + " | ".join(names) + " | fastest |"
                  + "".join(f" table's choice for {c} / fastest |" for c in choices[1]),
                  "|---|" + "---|" * (len(names) + 1 + len(choices[1]))]
        for b in sorted({b for a in names for b in times[a]}):
            row, meds = [fmt_size(b)], {}
            for a in names:
                passes = times[a].get(b)
                if not passes:
                    row.append("")
                    continue
                ts = [passes[p] for p in sorted(passes)]
                meds[a] = cbstats.median(ts)
                m = cbstats.median_interval(ts)
                model_t = predict(coll, a, b) if model_times else None
                row.append(_fmt_time(meds[a]) + (f" [{_fmt_time(m['lo'])}, {_fmt_time(m['hi'])}]"
                                                 if m else "")
                           + (f"; {_fmt_time(model_t)}" if model_t is not None else ""))
            best = min(meds, key=meds.get)
            row.append(f"`{best}`")
            for series in choices[1]:
                pick = chosen.get(series, {}).get(coll, {}).get(b)
                cell = f"`{pick}`" if pick else ""
                if pick in times and b in times[pick]:
                    both = sorted(set(times[best][b]) & set(times[pick][b]))
                    c = cbstats.compare_paired([times[best][b][p] for p in both],
                                               [times[pick][b][p] for p in both])
                    cell += " " + compare_mpis.fmt_ratio(
                        {"ratio": c["ratio"], "verdict": c["verdict"],
                         "ratio_ci95": compare_mpis.interval_json(c["interval"])})
                row.append(cell)
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return lines, {"revisions": revs - {None}, "documents": len(texts) + 2}


KINDS = {"ratios": ratios, "latency": latency, "replay": replay, "compare": compare,
         "omb": omb, "verdicts": verdicts, "link_model": link_model}

# README (relative to results/) -> block name -> (kind, {arguments}). Only the curated
# runs are under results/ (results/README.md); earlier runs, and their blocks, are in git
# history.
BLOCKS = {
    "vm-20261127/README.md": {
        "mpis-final": ("compare", {"folder": "mpis-final",
                                   "series": ["engine-mpich4", "engine-plain-mpich4",
                                              "preload-mpich4", "preload-mpich5",
                                              "preload-openmpi5"]}),
    },
}


# READMEs generated whole by a script of their own: (README relative to results/, the
# command that writes it). OUT names the file the command writes; OUTDIR a scratch copy of
# the README's folder, for a script that writes README.md into the folder it reads.
WHOLE = [
    ("h100-20261127/run1/README.md",
     ["scripts/gpu_report.py", "results/h100-20261127/run1", "-o", "OUT"]),
    ("h100-20261127/tune/README.md",
     ["scripts/gpu_report.py", "results/h100-20261127/tune", "-o", "OUT"]),
    ("vm-20261127/floors/README.md", ["results/vm-20261127/floors/make_readme.py", "OUT"]),
    ("vm-20261127/comm-cost/README.md", ["scripts/preload_comm_cost.py", "--table", "OUTDIR"]),
]


def regenerate_whole(rel, command):
    """The text command writes for results/rel (run from the repository's root)."""
    import shutil
    import subprocess
    import tempfile
    repo = os.path.dirname(RESULTS)
    with tempfile.TemporaryDirectory() as tmp:
        outdir = os.path.join(tmp, "folder")
        if "OUTDIR" in command:
            shutil.copytree(os.path.dirname(os.path.join(RESULTS, rel)), outdir)
            os.remove(os.path.join(outdir, os.path.basename(rel)))
        out = os.path.join(outdir if "OUTDIR" in command else tmp, os.path.basename(rel))
        p = subprocess.run([sys.executable] + [{"OUT": out, "OUTDIR": outdir}.get(a, a)
                                               for a in command],
                           cwd=repo, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise BlockError(f"results/{rel}: {' '.join(command)} failed: {p.stderr.strip()}")
        with open(out) as f:
            return f.read()


def render(readme, name):
    """The lines of one block, with a provenance line naming the revisions measured."""
    kind, args = BLOCKS[readme][name]
    args = dict(args)
    folder = os.path.join(RESULTS, os.path.dirname(readme), args.pop("folder", ""))
    try:
        lines, paths = KINDS[kind](folder, **args)
    except (OSError, KeyError, ValueError, BlockError) as e:
        raise BlockError(f"results/{readme}, block {name!r}: {e}") from None
    if isinstance(paths, dict):  # a kind that read its documents itself (packed ones)
        revs, count = sorted(paths["revisions"]), paths["documents"]
    else:
        revs, count = sorted(_revisions(sorted(set(paths)))), len(set(paths))
    head = ("Measured at " + ", ".join(f"`{r}`" for r in revs) if revs else
            "Revision measured: not recorded") + f"; {count} documents."
    return [head, "", *lines]


def refresh(text, readme):
    """text with every block of BLOCKS[readme] regenerated; raises BlockError for a block
    named in the text but not in BLOCKS, or one of BLOCKS missing from the text."""
    out, pos, seen = [], 0, set()
    while True:
        i = text.find(BEGIN, pos)
        if i < 0:
            break
        j = text.find(BEGIN_TAIL, i)
        k = text.find(END, i)
        if j < 0 or k < 0 or k < j:
            raise BlockError(f"results/{readme}: a block's markers are malformed near "
                             f"offset {i}")
        name = text[i + len(BEGIN):j]
        if name not in BLOCKS.get(readme, {}):
            raise BlockError(f"results/{readme}: block {name!r} is not in "
                             "scripts/results_blocks.py's BLOCKS")
        seen.add(name)
        out += [text[pos:i], text[i:j + len(BEGIN_TAIL)], "\n",
                "\n".join(render(readme, name)), "\n"]
        pos = k
    out.append(text[pos:])
    missing = set(BLOCKS.get(readme, {})) - seen
    if missing:
        raise BlockError(f"results/{readme}: no markers for block(s) "
                         + ", ".join(sorted(missing)))
    return "".join(out)
