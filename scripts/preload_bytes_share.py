#!/usr/bin/env python3
"""The share of a program's collective bytes that libcb_engine_preload.so's engine took
(issue 39), from the CB_PRELOAD_VERBOSE logs of preloaded runs (docs/preload.md: per rank
"cb_engine_preload: rank R: MPI_X: E engine, P passed through (...)" for calls and
"cb_engine_preload: rank R: bytes MPI_X: E engine, P passed through" for their bytes).

    scripts/preload_bytes_share.py [--json OUT.json] [--md OUT.md] APP=PATH [APP=PATH ...]

PATH is a log file or a folder searched for *.verbose files (scripts/preload_apps.sh writes
one per preloaded launch under OUTDIR/<app>/). Per application it sums every rank and launch:
calls and bytes taken by the engine and passed through, per function and in all, and the
passed-through calls' reasons. Bytes are count x the type's size as the library counts them;
collectives it does not route (gather, scatter, the v-forms, scans) are in neither column.
Prints a Markdown table (and writes it to --md); --json writes the numbers.
"""
import argparse
import glob
import json
import os
import re
import sys

CALLS = re.compile(r"^cb_engine_preload: rank \d+: (MPI_\w+): (\d+) engine, (\d+) passed through"
                   r"(?: \((.*)\))?$")
BYTES = re.compile(r"^cb_engine_preload: rank \d+: bytes (MPI_\w+): (\d+) engine, "
                   r"(\d+) passed through$")


def log_files(path):
    if os.path.isdir(path):
        return sorted(glob.glob(os.path.join(path, "**", "*.verbose"), recursive=True))
    return [path] if os.path.exists(path) else []


def collect(paths):
    """{"files": n, "functions": {fn: {calls_engine, calls_passed, bytes_engine, bytes_passed,
    reasons}}, totals} summed over the logs' lines."""
    per = {}
    files = 0
    for path in paths:
        files += 1
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                m = CALLS.match(line)
                b = BYTES.match(line)
                if not m and not b:
                    continue
                fn = (m or b).group(1)
                c = per.setdefault(fn, {"calls_engine": 0, "calls_passed": 0, "bytes_engine": 0,
                                        "bytes_passed": 0, "reasons": {}})
                if m:
                    c["calls_engine"] += int(m.group(2))
                    c["calls_passed"] += int(m.group(3))
                    for part in (m.group(4) or "").split(", "):
                        if ": " in part:
                            why, n = part.rsplit(": ", 1)
                            c["reasons"][why] = c["reasons"].get(why, 0) + int(n)
                else:
                    c["bytes_engine"] += int(b.group(2))
                    c["bytes_passed"] += int(b.group(3))
    totals = {k: sum(c[k] for c in per.values())
              for k in ("calls_engine", "calls_passed", "bytes_engine", "bytes_passed")}
    nb = {k: sum(c[k] for fn, c in per.items() if fn not in ("MPI_Barrier", "MPI_Ibarrier"))
          for k in ("calls_engine", "calls_passed")}
    totals["calls_engine_not_barrier"] = nb["calls_engine"]
    totals["calls_passed_not_barrier"] = nb["calls_passed"]
    return {"logs": files, "functions": per, "totals": totals}


def share(taken, passed):
    return None if taken + passed == 0 else taken / (taken + passed)


def pct(x):
    return "-" if x is None else f"{100 * x:.1f} %"


def human(n):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n} B"


def markdown(apps):
    lines = ["| application | logs | calls engine / passed through (not barriers) | calls taken "
             "| bytes engine / passed through | bytes taken "
             "| most bytes passed through (the calls' main reasons) |",
             "|---|---:|---|---:|---|---:|---|"]
    for name, a in apps.items():
        t = a["totals"]
        worst = sorted(((c["bytes_passed"], fn) for fn, c in a["functions"].items()
                        if c["bytes_passed"]), reverse=True)[:2]
        def reasons(fn):
            top = sorted(a["functions"][fn]["reasons"].items(), key=lambda x: -x[1])[:2]
            return ", ".join(f"{w}: {k}" for w, k in top)
        most = "; ".join(f"{fn} {human(n)} ({reasons(fn)})" for n, fn in worst) or "-"
        lines.append(
            f"| {name} | {a['logs']} | {t['calls_engine_not_barrier']} / "
            f"{t['calls_passed_not_barrier']} | {pct(a['calls_share_not_barrier'])} | "
            f"{human(t['bytes_engine'])} / {human(t['bytes_passed'])} | "
            f"{pct(a['bytes_share'])} | {most} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("apps", nargs="+", metavar="APP=PATH")
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--md", help="write the table here")
    args = ap.parse_args(argv)
    apps = {}
    for spec in args.apps:
        if "=" not in spec:
            ap.error(f"{spec!r}: expected APP=PATH")
        name, path = spec.split("=", 1)
        files = log_files(path)
        if not files:
            print(f"preload_bytes_share: {name}: no CB_PRELOAD_VERBOSE log at {path}",
                  file=sys.stderr)
            return 2
        a = collect(files)
        t = a["totals"]
        a["bytes_share"] = share(t["bytes_engine"], t["bytes_passed"])
        a["calls_share_not_barrier"] = share(t["calls_engine_not_barrier"],
                                             t["calls_passed_not_barrier"])
        apps[name] = a
    table = markdown(apps)
    print(table, end="")
    if args.md:
        with open(args.md, "w") as f:
            f.write(table)
    if args.json:
        doc = {"description": "Share of each application's collective calls and bytes that "
                              "libcb_engine_preload.so's engine took, summed over every rank "
                              "and launch of its CB_PRELOAD_VERBOSE logs "
                              "(scripts/preload_bytes_share.py). Bytes: count x the type's "
                              "size of the routed functions; shares are engine / (engine + "
                              "passed through); calls shares leave barriers out.",
               "applications": apps}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
