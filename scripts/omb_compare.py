#!/usr/bin/env python3
"""collbench against OMB's own binaries, from the rounds scripts/omb_compare.sh ran:

  omb_compare.py DIR [--tolerance PCT]

DIR holds run.json and, per round R and benchmark B, cb_B.R.json (collbench's JSON) and
osu_B.R.txt (osu_B's output: comment lines starting with '#', then "SIZE VALUE" lines;
VALUE is OMB's latency in us, or MB/s for bw and bibw). Per benchmark and size: the
per-round ratio collbench / OMB as times (for bw and bibw OMB's MB/s over collbench's, so
that a ratio below 1 always means collbench reports the better figure), its median and the
sign test's 95 % interval (scripts/cbstats.py, docs/statistics.md), and a verdict against
+-PCT % (default 5): "agree" when the interval lies within [1 - PCT, 1 + PCT], "differ"
when it lies wholly outside, "undecided" when it crosses a bound, "too few rounds" under 6.
Writes DIR/omb_compare.json and DIR/omb_compare.md (generated from the JSON)."""
import argparse
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402
import cbstats  # noqa: E402

BENCHES = ("latency", "bw", "bibw", "allreduce", "bcast", "alltoall")
RATES = ("bw", "bibw")  # OMB prints MB/s: higher is better
AGREE, DIFFER, UNDECIDED, TOO_FEW = "agree", "differ", "undecided", "too few rounds"


def read_osu(path):
    """{size: value} of an OMB output; ValueError naming the line of anything else."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split()
            try:
                out[int(parts[0])] = float(parts[1])
            except (IndexError, ValueError):
                raise ValueError(f"{path}:{n}: expected 'SIZE VALUE', got {line.rstrip()!r}")
    if not out:
        raise ValueError(f"{path}: no 'SIZE VALUE' line (did osu_ fail?)")
    return out


def read_cb(path, bench):
    """{size: value} of collbench's JSON: MB/s for bw and bibw, else latency_us.avg."""
    doc = cbjson.load(path)
    key = "bandwidth_MBps" if bench in RATES else None
    out = {}
    for r in doc["results"]:
        v = r.get(key) if key else (r.get("latency_us") or {}).get("avg")
        if v is not None:
            out[int(r["bytes"])] = float(v)
    return out


def verdict(interval, tol):
    if interval is None:
        return TOO_FEW
    if 1 - tol <= interval["lo"] and interval["hi"] <= 1 + tol:
        return AGREE
    if interval["hi"] < 1 - tol or interval["lo"] > 1 + tol:
        return DIFFER
    return UNDECIDED


def analyse(d, bench, tol):
    rounds = {}
    for path in glob.glob(os.path.join(d, f"osu_{bench}.*.txt")):
        r = int(re.search(r"\.(\d+)\.txt$", path).group(1))
        cb = os.path.join(d, f"cb_{bench}.{r}.json")
        if os.path.exists(cb):
            rounds[r] = (read_cb(cb, bench), read_osu(path))
    sizes = []
    for b in sorted({b for cb, osu in rounds.values() for b in set(cb) & set(osu)}):
        pairs = [(cb[b], osu[b]) for cb, osu in (rounds[r] for r in sorted(rounds))
                 if b in cb and b in osu and cb[b] > 0 and osu[b] > 0]
        # As times: collbench / OMB; for a rate, OMB / collbench.
        ratios = [(o / c) if bench in RATES else (c / o) for c, o in pairs]
        m = cbstats.median_interval(ratios)
        sizes.append({"bytes": b, "rounds": len(ratios), "ratios": ratios,
                      "ratio": cbstats.median(ratios),
                      "ratio_ci95": None if m is None else [m["lo"], m["hi"]],
                      "cb": cbstats.median([c for c, _ in pairs]),
                      "omb": cbstats.median([o for _, o in pairs]),
                      "verdict": verdict(m, tol)})
    return {"unit": "MB/s" if bench in RATES else "us", "rounds": sorted(rounds), "sizes": sizes}


def markdown(doc):
    run = doc.get("run", {})
    tol = doc["tolerance_pct"]
    lines = ["# collbench against OMB's own binaries (scripts/omb_compare.sh)", "",
             f"OMB {run.get('omb_version', '?')} from `{run.get('omb_source', '?')}`; collbench "
             f"at `{run.get('git_revision', '?')}`; {run.get('rounds', '?')} rounds, each pair's "
             f"order drawn per round (seed {run.get('seed', '?')}), started "
             f"{run.get('start', '?')}. Ratio: collbench / OMB as a time (bw, bibw: OMB's MB/s "
             "over collbench's), per round, the median and its 95 % interval (sign test); "
             f"verdict against +-{tol:g} %: agree (the interval within), differ (wholly "
             "outside), undecided (across a bound). Generated from omb_compare.json.", ""]
    for bench, res in doc["benchmarks"].items():
        counts = {}
        for e in res["sizes"]:
            counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
        lines += [f"## {bench}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())), "",
                  f"| size | collbench ({res['unit']}) | OMB ({res['unit']}) | ratio | 95 % "
                  "interval | verdict |", "|---|---:|---:|---:|---|---|"]
        for e in res["sizes"]:
            ci = e["ratio_ci95"]
            lines.append(f"| {cbjson.size_text(e['bytes'])} | {e['cb']:.2f} | {e['omb']:.2f} | "
                         f"{e['ratio']:.3f} | "
                         + (f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-")
                         + f" | {e['verdict']} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--tolerance", type=float, default=5.0, help="agreement bound, %%")
    a = ap.parse_args(argv)
    if not 0 < a.tolerance < 100:
        print("omb_compare.py: --tolerance must be between 0 and 100 (%)", file=sys.stderr)
        return 2
    try:
        with open(os.path.join(a.dir, "run.json")) as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        print(f"omb_compare.py: {a.dir}/run.json: {e}", file=sys.stderr)
        return 2
    doc = {"schema": "collbench.omb_compare/1", "run": run, "tolerance_pct": a.tolerance,
           "benchmarks": {}}
    try:
        for bench in BENCHES:
            if glob.glob(os.path.join(a.dir, f"osu_{bench}.*.txt")):
                doc["benchmarks"][bench] = analyse(a.dir, bench, a.tolerance / 100)
    except (ValueError, cbjson.InputError) as e:
        print(f"omb_compare.py: {e}", file=sys.stderr)
        return 1
    if not doc["benchmarks"]:
        print(f"omb_compare.py: no osu_<bench>.<round>.txt in {a.dir}", file=sys.stderr)
        return 1
    with open(os.path.join(a.dir, "omb_compare.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    md = markdown(doc)
    with open(os.path.join(a.dir, "omb_compare.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
