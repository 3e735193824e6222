#!/usr/bin/env python3
"""apps.json and summary.md of a scripts/preload_apps.sh run (issue 39, docs/preload.md).

    scripts/preload_apps_report.py OUTDIR

Reads OUTDIR/<app>/records.jsonl (what preload_apps.sh recorded: one check per application and
rank count, mpi4py's per-module output comparisons, the timed pairs), the preload's
CB_PRELOAD_VERBOSE logs and mpi4py's summary.txt; writes OUTDIR/apps.json and
OUTDIR/summary.md (a table per application: identical, engine calls / passed through with
the reasons, time ratio preload / plain with its 95 % interval). Exit status 1 when an
application's output under the preload differs from plain MPICH's (or a run failed)."""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbstats  # noqa: E402

LINE = re.compile(r"^cb_engine_preload: rank (\d+): (MPI_\w+): (\d+) engine, (\d+) passed through"
                  r"(?: \((.*)\))?$")


def engine_counts(paths):
    """Per function {engine, passed, reasons} summed over the verbose logs' ranks."""
    per = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE.match(line.strip())
                if not m:
                    continue
                c = per.setdefault(m.group(2), {"engine": 0, "passed": 0, "reasons": {}})
                c["engine"] += int(m.group(3))
                c["passed"] += int(m.group(4))
                for part in (m.group(5) or "").split(", "):
                    if ": " in part:
                        why, n = part.rsplit(": ", 1)
                        c["reasons"][why] = c["reasons"].get(why, 0) + int(n)
    return per


def totals(per):
    """engine/passed over every function and over those that are not barriers."""
    t = {"engine": 0, "passed": 0, "engine_not_barrier": 0, "passed_not_barrier": 0}
    for fn, c in per.items():
        t["engine"] += c["engine"]
        t["passed"] += c["passed"]
        if "arrier" not in fn:
            t["engine_not_barrier"] += c["engine"]
            t["passed_not_barrier"] += c["passed"]
    return t


def timing(rows):
    plain = [float(r["plain"]) for r in rows if r["plain"] != "failed" and r["preload"] != "failed"]
    pre = [float(r["preload"]) for r in rows if r["plain"] != "failed" and r["preload"] != "failed"]
    if not plain:
        return None
    return {"np": int(rows[0]["np"]), "passes": len(plain), "failed_passes": len(rows) - len(plain),
            "plain_s": cbstats.median_interval(plain) or {"median": cbstats.median(plain)},
            "preload_s": cbstats.median_interval(pre) or {"median": cbstats.median(pre)},
            "preload_over_plain": cbstats.compare_paired(plain, pre),
            "plain_s_raw": plain, "preload_s_raw": pre}


def mpi4py_suite(path):
    """Per module line of preload_mpi4py_tests.sh's summary.txt."""
    mods = []
    if not os.path.exists(path):
        return mods
    for line in open(path):
        m = re.match(r"^(test_\w+) np=(\d+): (.*)$", line.strip())
        if not m:
            continue
        rest = m.group(3)
        runs = dict(re.findall(r"(plain|preload) ([^;]*?) rc=", rest))
        mods.append({"module": m.group(1), "np": int(m.group(2)),
                     "plain": runs.get("plain"), "preload": runs.get("preload"),
                     "same_counts": rest.endswith(" same")})
    return mods


def fmt_interval(t):
    r = t["preload_over_plain"]
    if r["ratio"] is None:
        return "-"
    text = f"{r['ratio']:.3f}"
    if r["interval"]:
        text += f" [{r['interval']['lo']:.3f}, {r['interval']['hi']:.3f}]"
    return f"{text} {r['verdict']}"


def main():
    if len(sys.argv) != 2:
        print("usage: preload_apps_report.py OUTDIR (a scripts/preload_apps.sh run)", file=sys.stderr)
        return 2
    out = sys.argv[1]
    order = {"mpi4py": 0, "hdf5": 1, "scalapack": 2}
    paths = sorted(glob.glob(os.path.join(out, "*", "records.jsonl")),
                   key=lambda p: (order.get(os.path.basename(os.path.dirname(p)), 9), p))
    if not paths:
        print(f"preload_apps_report.py: no {out}/<app>/records.jsonl (a scripts/preload_apps.sh "
              "run's folder?)", file=sys.stderr)
        return 2
    recs = []
    for path in paths:
        try:
            with open(path) as f:
                recs += [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError) as e:
            print(f"preload_apps_report.py: cannot read {path}: {e}", file=sys.stderr)
            return 2
    doc = {"description": "Real MPI programs under libcb_engine_preload.so against plain MPICH "
                          "(scripts/preload_apps.sh, issue 39)", "applications": []}
    bad = 0
    apps = []
    for r in recs:
        a = r["app"].split("-")[0]
        if a not in apps:
            apps.append(a)
    for app in apps:
        entry = {"app": app, "checks": [], "timing": None}
        if app == "mpi4py":
            suite = [r for r in recs if r["kind"] == "suite" and r["app"] == "mpi4py"]
            sdir = os.path.join(out, os.path.dirname(suite[0]["summary"])) if suite else out
            mods = mpi4py_suite(os.path.join(sdir, "summary.txt"))
            outputs = {(r["module"], int(r["np"])): r["plain_vs_preload"]
                       for r in recs if r["kind"] == "output"}
            for m in mods:
                m["output"] = outputs.get((m["module"], m["np"]), "no preloaded output")
                # finished: unittest's counts (not "died", "TIMEOUT") in both runs
                m["finished"] = all(re.fullmatch(r"\d+ \d+ \d+", m[v] or "")
                                    for v in ("plain", "preload"))
                m["identical"] = m["finished"] and m["same_counts"] and m["output"] == "identical"
                # a module that did not finish in either run alike is reported, not judged
                m["unfinished_alike"] = not m["finished"] and m["plain"] == m["preload"]
                bad += not (m["identical"] or m["unfinished_alike"])
            by_np = {}
            for m in mods:
                by_np.setdefault(m["np"], []).append(m)
            for np_, ms in sorted(by_np.items()):
                per = engine_counts(glob.glob(os.path.join(sdir, f"*.np{np_}.preload.verbose")))
                entry["checks"].append({
                    "np": np_, "modules": len(ms),
                    "identical": sum(m["identical"] for m in ms),
                    "differ": [m["module"] for m in ms
                               if not (m["identical"] or m["unfinished_alike"])],
                    "unfinished_alike": [m["module"] for m in ms if m["unfinished_alike"]],
                    "engine": totals(per), "per_function": per, "per_module": ms})
        else:
            for r in recs:
                if r["kind"] != "check" or r["app"].split("-")[0] != app:
                    continue
                per = engine_counts([os.path.join(out, r["verbose"])])
                # "identical (apart from ...)": the output identical, a note on what differs
                ok = r["plain_vs_preload"].startswith("identical") and r["rc_plain"] == "0"
                bad += not ok
                entry["checks"].append({
                    "program": r["app"], "np": int(r["np"]), "rc_plain": int(r["rc_plain"]),
                    "rc_preload": int(r["rc_preload"]), "plain_vs_plain": r["plain_vs_plain"],
                    "plain_vs_preload": r["plain_vs_preload"], "identical": ok,
                    "seconds_plain": float(r["seconds_plain"]),
                    "seconds_preload": float(r["seconds_preload"]),
                    "engine": totals(per), "per_function": per})
        rows = [r for r in recs if r["kind"] == "time" and r["app"] == app]
        entry["timing"] = timing(rows) if rows else None
        doc["applications"].append(entry)
    with open(os.path.join(out, "apps.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")

    lines = ["| application | ranks | result under the preload | engine / passed through "
             "(not barriers) | most passed through |", "|---|---|---|---|---|"]
    for e in doc["applications"]:
        for c in e["checks"]:
            name = c.get("program", e["app"])
            if "modules" in c:
                res = f"{c['identical']} of {c['modules']} modules identical"
                if c["differ"]:
                    res += " (differ: " + ", ".join(c["differ"]) + ")"
                if c["unfinished_alike"]:
                    res += ("; did not finish, plain and preloaded alike: "
                            + ", ".join(f"{m['module']} ({m['plain']})" for m in c["per_module"]
                                        if m["unfinished_alike"]))
            else:
                res = c["plain_vs_preload"] if c["identical"] else "DIFFERS: " + c["plain_vs_preload"][:120]
                if c["plain_vs_plain"] != "identical":
                    res += " (plain runs differ too)"
            t = c["engine"]
            reasons = {}
            for fn, v in c["per_function"].items():
                for why, n in v["reasons"].items():
                    reasons[why] = reasons.get(why, 0) + n
            top = ", ".join(f"{w}: {n}" for w, n in sorted(reasons.items(), key=lambda x: -x[1])[:3])
            lines.append(f"| {name} | {c['np']} | {res} | {t['engine']} / {t['passed']} "
                         f"({t['engine_not_barrier']} / {t['passed_not_barrier']}) | {top or '-'} |")
    if not any(e["timing"] for e in doc["applications"]):
        lines += ["", "No timed pairs (REPS=0, or the timing did not run)."]
    else:
        lines += ["", "| application | timed | ranks | pairs | plain s (median) | preload s (median) "
                  "| preload / plain [95 %] |", "|---|---|---|---|---|---|---|"]
    timed_what = {"mpi4py": "test_cco_buf, test_cco_vec", "hdf5": "ph5example",
                  "scalapack": "xdlu"}
    for e in doc["applications"]:
        t = e["timing"]
        if not t:
            continue
        lines.append(f"| {e['app']} | {timed_what.get(e['app'], '')} | {t['np']} | {t['passes']} | "
                     f"{t['plain_s']['median']:.2f} | {t['preload_s']['median']:.2f} | "
                     f"{fmt_interval(t)} |")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
