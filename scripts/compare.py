#!/usr/bin/env python3
"""Compares collbench results size by size: ratio tables as Markdown and JSON.

  compare.py BASELINE.json CANDIDATE.json [CANDIDATE2.json ...]
  compare.py --baseline-backend mpi FILE.json [FILE.json ...]
  compare.py --baseline-backend mpi --summary summary.md --md comparisons.md FILE.json ...

ratio = candidate / baseline of the metric (a time for latency, a rate for bandwidths).
A size is SLOWER when the candidate takes more than --tolerance percent longer than the
baseline: time ratio > 1 + tol, or bandwidth ratio < 1 / (1 + tol). Where both runs were
measured with --repeat N, a size is WITHIN NOISE (~) when the ranges of the two sides'
passes (fastest to slowest) overlap. Standard library only; see docs/plots.md.

--summary writes one page: per benchmark, each candidate against the baseline backend by
size band (the median ratio of time, its interval or range, the verdicts), where the
candidate is slower, and links to the detail files. Interleaved runs (--backend mpi,engine,
docs/statistics.md) are summarized from their own paired ratios, intervals and verdicts.
"""
import argparse
import json
import math
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402
import compare_mpis  # noqa: E402  (the size bands of the summaries)

PROG = "compare.py"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("--metric", type=metric_list, metavar="M[,M...]",
                    help="figures to compare, of " + ", ".join(cbjson.METRICS) + " (default: "
                         "the first of latency, busbw, bandwidth that the baseline has); each "
                         "listed one the baseline has gets a table")
    ap.add_argument("--baseline-backend", metavar="NAME",
                    help="compare every (backend, algo) in FILEs against this backend's run "
                         "of the same benchmark and setup")
    ap.add_argument("--tolerance", type=float, default=5.0, metavar="PCT",
                    help="flag a size as SLOWER only beyond this many percent (default 5)")
    ap.add_argument("--md", metavar="OUT.md", help="write the Markdown report here")
    ap.add_argument("--json", metavar="OUT.json", help="write the comparison as JSON here")
    ap.add_argument("--summary", metavar="OUT.md",
                    help="with --baseline-backend: write the one-page summary here (links "
                         "to --md's file and to the interleaved runs' tables)")
    ap.add_argument("--skip-invalid", action="store_true",
                    help="warn about and leave out files that are not usable results "
                         "(default: such a file is an error)")
    ap.add_argument("--fail-on-slower", action="store_true",
                    help="exit with status 1 when any size is SLOWER")
    args = ap.parse_args(argv)
    if not args.baseline_backend and len(args.files) < 2:
        ap.error("give a baseline and at least one candidate, or --baseline-backend NAME")
    if args.summary and not args.baseline_backend:
        ap.error("--summary needs --baseline-backend")
    if args.tolerance < 0:
        ap.error("--tolerance must not be negative")
    return args


def metric_list(value):
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in cbjson.METRICS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown metric {', '.join(unknown) or value!r}; choose from "
            + ", ".join(cbjson.METRICS))
    return names


# --- comparing ---------------------------------------------------------------------------

def choose_metrics(series, wanted):
    """The metrics to compare: those asked for that the series has, else the first of
    latency, busbw, bandwidth that it has."""
    have = [cbjson.METRICS[n] for n in wanted or ["latency", "busbw", "bandwidth"]
            if series.values(cbjson.METRICS[n])]
    return have if wanted else have[:1]


def is_slower(ratio, metric, tolerance_pct):
    limit = 1 + tolerance_pct / 100
    return ratio > limit if metric.lower_is_better else ratio < 1 / limit


def overlap(a, b):
    """Whether two (low, high) ranges share a point; None when either is unknown."""
    if a is None or b is None:
        return None
    return a[0] <= b[1] and b[0] <= a[1]


def compare(base, cand, metric, tolerance_pct):
    """One comparison: a row per size both series measured."""
    bv, cv = base.values(metric), cand.values(metric)
    br, cr = base.ranges(metric), cand.ranges(metric)
    rows = []
    for size in sorted(set(bv) & set(cv)):
        ratio = cv[size] / bv[size] if bv[size] > 0 else None
        slower = None if ratio is None else is_slower(ratio, metric, tolerance_pct)
        b_rng, c_rng = br.get(size), cr.get(size)
        rows.append({"bytes": size, "baseline": bv[size], "candidate": cv[size],
                     "ratio": ratio, "slower": slower,
                     "baseline_range": list(b_rng) if b_rng else None,
                     "candidate_range": list(c_rng) if c_rng else None,
                     "within_noise": overlap(b_rng, c_rng)})
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return {"benchmark": base.benchmark, "metric": metric.name, "unit": metric.unit,
            "better": "lower" if metric.lower_is_better else "higher",
            "baseline": base.describe(), "candidate": cand.describe(), "rows": rows,
            "slower_sizes": [r["bytes"] for r in rows if r["slower"]],
            "only_in_baseline": sorted(set(bv) - set(cv)),
            "only_in_candidate": sorted(set(cv) - set(bv)),
            "geomean_ratio": geomean,
            "repeat": {"baseline": base.passes(), "candidate": cand.passes()},
            "noise_known": any(r["within_noise"] is not None for r in rows),
            "within_noise_sizes": [r["bytes"] for r in rows if r["within_noise"]]}


def pair_mode(series, args):
    """First file's series are the baselines; each candidate series is compared with the
    baseline series of the same algorithm, else the baseline file's first series."""
    base_path = series[0].path
    bases = [s for s in series if s.path == base_path]
    out = []
    for cand in (s for s in series if s.path != base_path):
        base = next((b for b in bases if b.algo == cand.algo), bases[0])
        out += compare_or_note(base, cand, args)
    return out


def baseline_backend_mode(series, args):
    """Within each (benchmark, ranks, buffers, dtype, op), every series against the
    baseline backend's series (its algorithm-less one if it has several)."""
    groups = {}
    for s in series:
        groups.setdefault(cbjson.setup_key(s.doc), []).append(s)
    out = []
    for members in groups.values():
        bases = [s for s in members if s.backend == args.baseline_backend]
        if not bases:
            continue
        base = next((b for b in bases if not b.algo), bases[0])
        for cand in (c for c in members if c is not base):
            out += compare_or_note(base, cand, args)
    return out


def compare_or_note(base, cand, args):
    """The comparisons of two series, one per metric; a note when there is none."""
    metrics = choose_metrics(base, args.metric)
    if not metrics:
        what = " or ".join(args.metric or ["latency", "busbw", "bandwidth"])
        return [{"benchmark": base.benchmark, "baseline": base.describe(),
                 "candidate": cand.describe(), "rows": [],
                 "note": f"the baseline has no {what} figures"}]
    return [compare(base, cand, m, args.tolerance) for m in metrics]


# --- output ------------------------------------------------------------------------------

def fmt(v, digits=4):
    return "n/a" if v is None else f"{v:.{digits}g}"


def fmt_range(rng):
    return "n/a" if rng is None else f"{fmt(rng[0])}–{fmt(rng[1])}"


def markdown_table(c):
    """The per-size table; with --repeat data, the pass ranges and a noise column (~)."""
    noise = c.get("noise_known")
    head = f"| Size (B) | Baseline ({c['unit']}) | Candidate ({c['unit']}) | Ratio | |"
    rule = "|---:|---:|---:|---:|:--|"
    if noise:
        head += " Baseline passes | Candidate passes | Noise |"
        rule += "---:|---:|:-:|"
    lines = [head, rule]
    for r in c["rows"]:
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.3f}"
        flag = "SLOWER" if r["slower"] else ""
        line = (f"| {cbjson.format_size(r['bytes'])} | {fmt(r['baseline'])} | "
                f"{fmt(r['candidate'])} | {ratio} | {flag} |")
        if noise:
            mark = {True: "~", False: "", None: "n/a"}[r["within_noise"]]
            line += (f" {fmt_range(r['baseline_range'])} | {fmt_range(r['candidate_range'])} "
                     f"| {mark} |")
        lines.append(line)
    return lines


def noise_sentence(c):
    """What the noise column means, or why there is none."""
    rep = c.get("repeat") or {}
    if c.get("noise_known"):
        return (f"Passes: the fastest to the slowest of the {rep.get('baseline')} baseline and "
                f"{rep.get('candidate')} candidate passes (--repeat); ~ = the two ranges "
                "overlap: the difference is within this machine's noise.")
    missing = [side for side in ("baseline", "candidate") if not rep.get(side)]
    if missing:
        return (f"No repeat data in the {' and '.join(missing)} (run with --repeat N): "
                "noise cannot be told from difference.")
    return f"No repeat data for {c['metric']}: noise cannot be told from difference."


def markdown_one(c, tolerance):
    head = f"### {c['benchmark']}: {c['candidate']['label']} vs {c['baseline']['label']}"
    files = (f"Baseline `{os.path.basename(c['baseline']['file'])}`, "
             f"candidate `{os.path.basename(c['candidate']['file'])}`.")
    if "note" in c:
        return [head, "", files, "", f"Not compared: {c['note']}.", ""]
    metric = cbjson.METRICS[c["metric"]]
    better = "lower" if metric.lower_is_better else "higher"
    lines = [head, "", files,
             f"Metric: {metric.title} ({c['unit']}, {better} is better); "
             f"ratio = candidate / baseline; SLOWER = candidate more than {tolerance:g}% slower.",
             ""]
    lines += markdown_table(c) if c["rows"] else ["No message size was measured by both."]
    lines += ["", summary_sentence(c), noise_sentence(c), ""]
    return lines


def summary_sentence(c):
    n = len(c["rows"])
    s = f"Geometric mean ratio {fmt(c['geomean_ratio'])} over {n} sizes; "
    slow = [cbjson.format_size(b) for b in c["slower_sizes"]]
    s += f"slower at {len(slow)} of {n}" + (f" ({', '.join(slow)})" if slow else "")
    if c.get("noise_known"):
        noisy = [cbjson.format_size(b) for b in c["within_noise_sizes"]]
        s += f"; within noise at {len(noisy)} of {n}" + (f" ({', '.join(noisy)})" if noisy
                                                          else "")
    s += "."
    for key, what in (("only_in_baseline", "baseline"), ("only_in_candidate", "candidate")):
        if c[key]:
            s += f" Only in the {what}: {', '.join(map(cbjson.format_size, c[key]))}."
    return s


def markdown(comparisons, tolerance):
    lines = ["## collbench comparison", "",
             "| Benchmark | Candidate | Baseline | Metric | Geomean ratio | Slower sizes "
             "| Within noise |",
             "|---|---|---|---|---:|---:|---:|"]
    for c in comparisons:
        metric = c.get("metric", "-")
        slower = f"{len(c.get('slower_sizes', []))} of {len(c['rows'])}"
        noisy = (f"{len(c['within_noise_sizes'])} of {len(c['rows'])}"
                 if c.get("noise_known") else "n/a")
        lines.append(f"| {c['benchmark']} | {c['candidate']['label']} | "
                     f"{c['baseline']['label']} | {metric} | {fmt(c.get('geomean_ratio'))} | "
                     f"{slower} | {noisy} |")
    if not comparisons:
        lines.append("| (none: no run to compare with a baseline) | | | | | | |")
    lines.append("")
    for c in comparisons:
        lines += markdown_one(c, tolerance)
    return "\n".join(lines)


# --- the one-page summary ----------------------------------------------------------------

BAND_TITLES = ["<= 1 KiB", "1-16 KiB", "16-256 KiB", "256 KiB-4 MiB", "> 4 MiB"]


def band_of(size):
    return next(i for i, (lo, hi) in enumerate(compare_mpis.BANDS) if lo <= size <= hi)


def time_ratio(ratio, metric_name):
    """candidate / baseline time: a rate's ratio inverted (< 1: the candidate is faster)."""
    if ratio is None or ratio <= 0:
        return None
    return ratio if cbjson.METRICS[metric_name].lower_is_better else 1 / ratio


def verdict_of(row, c, tolerance):
    """A separate runs' size: slower or faster beyond the tolerance with the passes apart,
    else ~ (within the tolerance or the noise)."""
    t = time_ratio(row["ratio"], c["metric"])
    if t is None or row["within_noise"]:
        return "~"
    limit = 1 + tolerance / 100
    return "slower" if t > limit else "faster" if t < 1 / limit else "~"


def separate_points(c, tolerance):
    """[(bytes, time ratio, None, verdict)] of a two-file comparison."""
    return [(r["bytes"], time_ratio(r["ratio"], c["metric"]), None, verdict_of(r, c, tolerance))
            for r in c["rows"] if time_ratio(r["ratio"], c["metric"]) is not None]


def interleaved_points(doc, series):
    """[(bytes, ratio, interval, verdict)] of one series of an interleaved run."""
    out = []
    for r in doc.get("results", []):
        vs = r.get("versus")
        if r.get("series") == series and isinstance(vs, dict) and vs.get("ratio") is not None:
            out.append((int(r["bytes"]), vs["ratio"], vs.get("ratio_ci95"),
                        vs.get("verdict") or "?"))
    return out


def band_cell(points):
    """'0.28 [0.07, 0.73] faster 6/6': the median ratio of the band's sizes, the span of
    their intervals (or of their ratios, in parentheses, for separate runs), the verdicts."""
    if not points:
        return "-"
    ratios = sorted(p[1] for p in points)
    med = ratios[(len(ratios) - 1) // 2]
    cis = [p[2] for p in points if p[2]]
    if cis:
        span = f" [{min(c[0] for c in cis):.2f}, {max(c[1] for c in cis):.2f}]"
    else:
        span = f" ({ratios[0]:.2f}-{ratios[-1]:.2f})" if len(ratios) > 1 else ""
    tally = {}
    for p in points:
        tally[p[3]] = tally.get(p[3], 0) + 1
    order = ["faster", "slower", "indistinguishable", "~", "too few passes"]
    votes = ", ".join(f"{v} {n}/{len(points)}" for v, n in
                      sorted(tally.items(), key=lambda kv: (order + [kv[0]]).index(kv[0])))
    return f"{med:.2f}{span} {votes.replace('indistinguishable', 'indist.')}"


def summary_rows(comparisons, interleaved, tolerance, detail_md):
    """[(benchmark, candidate, method, points, detail file)], one per benchmark and
    candidate (a two-file comparison's first metric)."""
    rows, seen = [], set()
    for c in comparisons:
        key = (c["benchmark"], c["baseline"]["file"], c["candidate"]["file"],
               c["candidate"]["algo"])
        if "note" in c or key in seen:
            continue
        seen.add(key)
        name = c["candidate"]["label"].split(" (")[0]
        rows.append((c["benchmark"], name, f"separate runs, {c['metric']}",
                     separate_points(c, tolerance), detail_md))
    for path, doc in interleaved:
        inter = doc["interleave"]
        for s in inter.get("series", [])[1:]:
            rows.append((cbjson.text(doc, "benchmark", "name"), s["name"],
                         f"interleaved, {inter.get('passes')} passes",
                         interleaved_points(doc, s["name"]),
                         os.path.splitext(os.path.basename(path))[0] + ".txt"))
    return sorted(rows, key=lambda r: (r[0], r[1]))


def summary_page(comparisons, interleaved, baseline, tolerance, detail_md):
    rows = summary_rows(comparisons, interleaved, tolerance, detail_md)
    used = sorted({band_of(b) for r in rows for b, *_ in r[3]})
    lines = ["# collbench summary", "",
             f"Each candidate against `{baseline}` at the same sizes: the ratio of times "
             "(candidate / baseline, < 1: the candidate is faster; a bandwidth's ratio "
             "inverted), per size band the median over its sizes and the verdicts. "
             "**Interleaved** runs (both in one process, passes shuffled, "
             "docs/statistics.md): [the span of the per-size 95 % intervals], verdicts "
             "faster / slower / indist. (the interval holds 1). **Separate runs**: (the "
             f"span of the ratios); slower / faster beyond {tolerance:g} % with the passes "
             "apart, ~ within the tolerance or the noise.", ""]
    head = ["Benchmark", "Candidate", "Method"] + [BAND_TITLES[i] for i in used] + ["Detail"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for bench, cand, method, points, detail in rows:
        cells = [band_cell([p for p in points if band_of(p[0]) == i]) for i in used]
        link = f"[{detail}]({detail})" if detail else ""
        lines.append(f"| {bench} | {cand} | {method} | " + " | ".join(cells) + f" | {link} |")
    if not rows:
        lines.append("| (none: no run to compare with the baseline) |" + " |" * (len(head) - 1))
    slower = [(bench, cand, [b for b, _, _, v in points if v == "slower"])
              for bench, cand, _, points, _ in rows]
    slower = [(b, c, sizes) for b, c, sizes in slower if sizes]
    lines += ["", f"## Where a candidate is slower than {baseline}", ""]
    lines += [f"- {b}, {c}: {', '.join(cbjson.size_text(x) for x in sizes)}"
              for b, c, sizes in slower] or ["- nowhere (no size with the verdict slower)"]
    lines += ["", "Detail: " + ", ".join(filter(None, [
        f"[{detail_md}]({detail_md}) (every size of the separate runs)" if detail_md else "",
        "the interleaved runs' tables (`*.txt`, per size: median, interval, ratio, verdict)",
        "[plots/](plots/)"])) + ".", ""]
    return "\n".join(lines)


def write(path, content):
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
    except OSError as e:
        raise cbjson.InputError(f"{path}: cannot write: {e.strerror}") from None


def main(argv=None):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        loaded = cbjson.load_all(args.files, args.skip_invalid, PROG)
        # Interleaved runs carry their own paired comparison (--summary reads it); their
        # records, several series in one file, are not compared here.
        interleaved = [(p, d) for p, d in loaded if isinstance(d.get("interleave"), dict)]
        inter_ids = {id(d) for _, d in interleaved}
        series = cbjson.all_series([(p, d) for p, d in loaded if id(d) not in inter_ids])
        if args.baseline_backend:
            comparisons = baseline_backend_mode(series, args)
            if not any(s.backend == args.baseline_backend for s in series) and \
                    not any(d["interleave"].get("baseline") == args.baseline_backend
                            for _, d in interleaved):
                raise cbjson.InputError(f"no file has backend '{args.baseline_backend}'")
        else:
            if series[0].path != args.files[0]:
                raise cbjson.InputError(f"{args.files[0]}: the baseline is not usable")
            comparisons = pair_mode(series, args)
        md = markdown(comparisons, args.tolerance)
        doc = {"schema": "collbench.compare/1", "tolerance_pct": args.tolerance,
               "comparisons": comparisons}
        if args.md:
            write(args.md, md + "\n")
        if args.json:
            write(args.json, json.dumps(doc, indent=2) + "\n")
        if args.summary:
            detail = os.path.basename(args.md) if args.md else None
            write(args.summary, summary_page(comparisons, interleaved, args.baseline_backend,
                                             args.tolerance, detail) + "\n")
    except cbjson.InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    if not args.md and not args.json:
        print(md)
    slower = any(c.get("slower_sizes") for c in comparisons)
    return 1 if args.fail_on_slower and slower else 0


if __name__ == "__main__":
    sys.exit(main())
