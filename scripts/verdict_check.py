#!/usr/bin/env python3
"""The summary of scripts/verdict_check.sh (issue 36, "Done when").

  scripts/verdict_check.py OUTDIR [--runs N] [--launches K]

Reads every interleaved collbench.result/1 document in OUTDIR/raw/ (cb_allreduce
--backend mpi,engine and --backend mpi,mpi, one size per launch, N separate launches).
Per pair of series (the baseline and each other series of a document; a pair is named by
its series with a repetition's ".N" left out: "mpi,engine", "mpi,mpi") and size, in
launch order (start_time): each launch's verdict, ratio and 95 % ratio interval; whether
all the intervals overlap (their intersection, the largest lo to the smallest hi, is not
empty); the majority verdict and its count. Criteria, at every size:
  - a pair of different series: the same verdict in at least 9 of 10 launches (90 %,
    rounded up, of N) and intervals that all overlap;
  - a pair of one series with itself (mpi,mpi): "indistinguishable" in at least 9 of 10
    (and the intervals overlap).
A pair with fewer than N launches fails (a launch that failed: OUTDIR/failures.txt).

With --launches K (K >= 6; verdict_check.sh's CB_LAUNCHES), each of the N runs is K
launches (raw/rNN.lKK.<pair>.<size>.json) and the launch is the unit, as ReproMPI's
"mpiruns": a run's ratio is the median of its K launches' ratios, its interval the sign
test's over those K values, its verdict that interval's side of 1 (scripts/cbstats.py).
One launch's interval covers only what varies from pass to pass within it; what a launch
fixes (where buffers and the engine's segments land in memory, the cores' caches and
frequencies at start) varies from launch to launch, so the same comparison's intervals
from separate launches need not overlap. Over K launches the interval covers that too.

Writes OUTDIR/verdict_check.json (the summary: every number the Markdown shows, the git
revision the binaries report and that of the source tree when they ran, from
OUTDIR/tree_revision.txt) and OUTDIR/verdict_check.md (the
tables, generated from the summary alone; also printed). Exit 0 when every criterion
holds, 1 when one fails, 2 when the input is unusable (one line on stderr)."""
import argparse
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402
import cbstats  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARE = 0.9  # "at least 9 of 10"


class Unusable(Exception):
    pass


fmt_size = cbjson.size_text


def base_name(series):
    """A series' name without a repetition's number: mpi.2 -> mpi."""
    return re.sub(r"\.\d+$", "", series)


def tree_revision(outdir):
    """The source tree's revision when the launches ran (OUTDIR/tree_revision.txt, which
    verdict_check.sh writes first), else now."""
    try:
        with open(os.path.join(outdir, "tree_revision.txt")) as f:
            return f.read().strip() or "unknown"
    except OSError:
        pass
    try:
        p = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"],
                           capture_output=True, text=True, timeout=30)
        return p.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def raw_documents(outdir):
    """[(path, text)] of OUTDIR/raw/*.json, or of OUTDIR/raw.tar.xz's raw/*.json where the
    folder is absent (a committed check keeps its hundreds of documents packed)."""
    try:
        texts = cbjson.packed_texts(outdir, "raw")
    except cbjson.InputError as e:
        raise Unusable(str(e)) from None
    if not texts and not os.path.exists(os.path.join(outdir, "raw.tar.xz")):
        raise Unusable(f"{outdir}/raw: no JSON documents (and no raw.tar.xz)")
    return texts


def load(outdir):
    texts = raw_documents(outdir)
    if not texts:
        raise Unusable(f"{outdir}: no raw/*.json documents")
    docs = []
    for path, text in texts:
        try:
            doc = json.loads(text)
            cbjson.check(doc, path)
        except ValueError as e:
            raise Unusable(f"{path}: not valid JSON: {e}") from None
        except cbjson.InputError as e:
            raise Unusable(str(e)) from None
        if not isinstance(doc.get("interleave"), dict):
            raise Unusable(f"{path}: not an interleaved run (no 'interleave': --backend a,b)")
        docs.append((path, doc))
    docs.sort(key=lambda pd: (pd[1].get("start_time", ""), pd[0]))
    return docs


RUN_OF = re.compile(r"^r(\d+)\.l\d+\.")


def by_run(entries, launches):
    """Each run's K launch entries made one: the median of their ratios, the sign test's
    interval over them and its verdict (a run with under 6 launches: no interval)."""
    runs = {}
    for e in entries:
        m = RUN_OF.match(os.path.basename(e["document"]))
        if not m:
            raise Unusable(f"{e['document']}: with --launches, raw files are named "
                           "rNN.lKK.<pair>.<size>.json")
        runs.setdefault(int(m.group(1)), []).append(e)
    out = []
    for run in sorted(runs):
        es = runs[run]
        ratios = [e["ratio"] for e in es if e["ratio"] is not None]
        m = cbstats.median_interval(ratios)
        out.append({
            "document": [e["document"] for e in es], "series": es[0]["series"],
            "seed": [e["seed"] for e in es], "start_time": es[0]["start_time"],
            "verdict": cbstats.verdict(m), "ratio": cbstats.median(ratios),
            "ratio_ci95": None if m is None else [m["lo"], m["hi"]],
            "confidence": None if m is None else m["confidence"],
            "passes": es[0]["passes"], "launches": len(es), "launch_ratios": ratios,
            "iterations": es[0]["iterations"], "warmup": es[0]["warmup"],
            "complete": len(es) == launches})
    return out


def summarize(outdir, runs, launches=1):
    docs = load(outdir)
    groups = {}  # (pair, bytes) -> [entry per launch]
    builds, hosts, starts = Counter(), Counter(), []
    for path, doc in docs:
        env = doc.get("environment", {})
        builds[env.get("collbench", {}).get("git_revision", "unknown")] += 1
        hosts[env.get("hostname", "?")] += 1
        starts.append(doc.get("start_time", ""))
        baseline = doc["interleave"]["baseline"]
        for rec in doc["results"]:
            v = rec.get("versus")
            if not v:
                continue
            pair = f"{base_name(baseline)},{base_name(rec['series'])}"
            groups.setdefault((pair, rec["bytes"]), []).append({
                "document": os.path.relpath(path, outdir),
                "series": [baseline, rec["series"]],
                "seed": doc["interleave"].get("seed"),
                "start_time": doc.get("start_time"),
                "verdict": v["verdict"],
                "ratio": v["ratio"],
                "ratio_ci95": v["ratio_ci95"],
                "confidence": v["confidence"],
                "passes": len(v["pass_ratios"]),
                "iterations": rec.get("iterations"),
                "warmup": rec.get("warmup"),
            })
    if not groups:
        raise Unusable(f"{outdir}/raw: no record compares two series (versus)")
    need = math.ceil(SHARE * runs - 1e-9)
    checks = []
    for (pair, b), entries in sorted(groups.items(), key=lambda kv: (
            kv[0][0].split(",")[0] == kv[0][0].split(",")[1], kv[0][0], kv[0][1])):
        short = []
        if launches > 1:
            entries = by_run(entries, launches)
            short = [str(i + 1) for i, e in enumerate(entries) if not e["complete"]]
        verdicts = [e["verdict"] for e in entries]
        cis = [e["ratio_ci95"] for e in entries]
        majority, count = Counter(verdicts).most_common(1)[0]
        defined = all(ci is not None for ci in cis)
        lo = max(ci[0] for ci in cis) if defined else None
        hi = min(ci[1] for ci in cis) if defined else None
        overlap = defined and lo <= hi
        equal = len(set(pair.split(","))) == 1
        if equal:
            wanted = "indistinguishable"
            hits = verdicts.count(wanted)
            criterion = f"\"indistinguishable\" in at least {need} of {runs}; intervals overlap"
        else:
            wanted, hits = majority, count
            criterion = f"the same verdict in at least {need} of {runs}; intervals overlap"
        why = []
        if len(entries) < runs:
            why.append(f"{len(entries)} runs of {runs}")
        if short:
            why.append(f"run(s) {', '.join(short)} with fewer than {launches} launches")
        if hits < need:
            why.append(f"{wanted}: {hits} of {len(entries)}")
        if not overlap:
            why.append("intervals do not all overlap")
        checks.append({
            "pair": pair, "bytes": b, "equal_pair": equal, "launches": len(entries),
            "verdicts": verdicts, "ratios": [e["ratio"] for e in entries], "ratio_ci95": cis,
            "seeds": [e["seed"] for e in entries], "documents": [e["document"] for e in entries],
            "launch_ratios": [e.get("launch_ratios") for e in entries] if launches > 1 else None,
            "passes": sorted({e["passes"] for e in entries}),
            "iterations": sorted({e["iterations"] for e in entries if e["iterations"]}),
            "warmup": sorted({e["warmup"] for e in entries if e["warmup"] is not None}),
            "max_lo": lo, "min_hi": hi,
            "majority": majority, "majority_count": count, "indistinguishable_count":
            verdicts.count("indistinguishable"), "overlap": overlap,
            "common_interval": [lo, hi] if overlap else None,
            "criterion": criterion, "passed": not why, "why": "; ".join(why)})
    failures = ""
    fpath = os.path.join(outdir, "failures.txt")
    if os.path.exists(fpath):
        with open(fpath) as f:
            failures = f.read().strip()
    return {
        "kind": "verdict_check", "version": 1,
        "what": "issue 36, Done when: cb_allreduce --backend mpi,engine and --backend mpi,mpi, "
                "each size in its own launch, the launches repeated; per pair and size the "
                "verdicts, the ratio intervals, whether they overlap, the majority verdict",
        "runs": runs, "launches_per_run": launches, "needed": need,
        "build_git_revision": sorted(builds),
        "tree_git_revision": tree_revision(outdir),
        "hosts": sorted(hosts),
        "first_start": min(starts), "last_start": max(starts),
        "argv": docs[0][1].get("argv"),
        "launch_failures": failures.splitlines() if failures else [],
        "passed": all(c["passed"] for c in checks) and not failures,
        "checks": checks,
    }


def ci_text(ci):
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def markdown(s):
    out = [f"# Verdict check ({'PASSED' if s['passed'] else 'FAILED'})", ""]
    builds = ", ".join(s["build_git_revision"])
    seeds = sorted({x for c in s["checks"] for sd in c["seeds"]
                    for x in (sd if isinstance(sd, list) else [sd])})
    k = s.get("launches_per_run", 1)
    stale = ("" if s["build_git_revision"] == [s["tree_git_revision"]]
             else f" (the source tree was at `{s['tree_git_revision']}`)")
    out += [f"`scripts/verdict_check.sh`, generated by `scripts/verdict_check.py` from "
            f"`verdict_check.json`. Binaries at `{builds}`{stale}; host "
            f"{', '.join(s['hosts'])}; launches {s['first_start']} to {s['last_start']}; "
            + (f"{s['runs']} launches per pair and size (seeds {', '.join(map(str, seeds))}). "
               "Ratio: series time / baseline time, the median of the per-pass ratios, with "
               "its 95 % interval (sign test)." if k == 1 else
               f"{s['runs']} runs per pair and size, each of {k} launches (seeds "
               f"{seeds[0]}-{seeds[-1]}). A run's ratio: the median over its launches of each "
               "launch's median per-pass ratio (series time / baseline time), with the sign "
               "test's interval over the launches (the launch is the unit)."), ""]
    out += ["| pair | size | passes x iterations (warmup) | verdicts | majority | ratio (min-max) "
            "| intervals' common part | criterion | result |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in s["checks"]:
        tally = ", ".join(f"{v} {n}" for v, n in Counter(c["verdicts"]).most_common())
        if c["overlap"]:
            common = ci_text(c["common_interval"])
        elif c["max_lo"] is None:
            common = "none: an interval is missing"
        else:
            common = f"none: largest lo {c['max_lo']:.3f} > smallest hi {c['min_hi']:.3f}"
        counts = (f"{'/'.join(map(str, c['passes']))} x {'/'.join(map(str, c['iterations']))} "
                  f"({'/'.join(map(str, c['warmup']))})")
        out.append(f"| {c['pair']} | {fmt_size(c['bytes'])} | {counts} | {tally} | "
                   f"{c['majority']} ({c['majority_count']}/{c['launches']}) | "
                   f"{min(c['ratios']):.3f}-{max(c['ratios']):.3f} | "
                   f"{common} | "
                   f"{c['criterion']} | {'pass' if c['passed'] else 'FAIL: ' + c['why']} |")
    if s["launch_failures"]:
        out += ["", "Launches that failed:", ""] + [f"- `{f}`" for f in s["launch_failures"]]
    out += ["", ("Each launch" if k == 1 else "Each run") + " (ratio, 95 % interval, verdict):",
            ""]
    cols = [(c["pair"], c["bytes"]) for c in s["checks"]]
    out.append(("| launch | " if k == 1 else "| run | ") + " | ".join(f"{p} {fmt_size(b)}" for p, b in cols) + " |")
    out.append("|---" * (len(cols) + 1) + "|")
    for k in range(max(c["launches"] for c in s["checks"])):
        cells = []
        for c in s["checks"]:
            if k < c["launches"]:
                cells.append(f"{c['ratios'][k]:.3f} {ci_text(c['ratio_ci95'][k])} "
                             f"{c['verdicts'][k]}")
            else:
                cells.append("-")
        out.append(f"| {k + 1} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--runs", type=int, default=10, help="launches expected per pair and size")
    ap.add_argument("--launches", type=int, default=1,
                    help="launches per run (the launch as the unit: at least 6)")
    ap.add_argument("--write-to", metavar="DIR",
                    help="write verdict_check.json and .md there (default: OUTDIR)")
    a = ap.parse_args()
    if a.runs < 1:
        print("verdict_check: --runs must be at least 1", file=sys.stderr)
        return 2
    if a.launches != 1 and a.launches < cbstats.MIN_PASSES:
        print(f"verdict_check: --launches must be 1 or at least {cbstats.MIN_PASSES} (a 95 % "
              "interval over launches needs 6)", file=sys.stderr)
        return 2
    try:
        s = summarize(a.outdir, a.runs, a.launches)
    except Unusable as e:
        print(f"verdict_check: {e}", file=sys.stderr)
        return 2
    dest = a.write_to or a.outdir
    with open(os.path.join(dest, "verdict_check.json"), "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")
    md = markdown(s)
    with open(os.path.join(dest, "verdict_check.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    return 0 if s["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
