"""Interleaved series (issue 36; docs/statistics.md): comma lists in --backend, --algo and
--alloc measure every combination in one run, pass by pass in an order shuffled per pass
(--seed), with each series' median interval and, against the first series, the paired
ratio's interval and a verdict. Rows, records and the document's `interleave` header; an
equal pair (mpi,mpi) that must not come out different; algorithms and allocations as
series; the seed; refusals of what series cannot combine with. Also the issue's 10-launch
check: scripts/verdict_check.py's criteria on hand-made documents, scripts/verdict_check.sh
end to end (small), and the committed result regenerated from its raw documents."""
import copy
import json
import os
import subprocess
import sys

from cbtest import REPO, case, check, check_document, check_refused, load_json
from test_schemas import Schemas, jsonschema_or_skip

LABELS = ('release', 'mpi')  # tests/labels.md

VERDICTS = {"faster", "slower", "indistinguishable", "too few passes"}
SERIES_COLUMNS = ("Series", "Median CI(us)", "Ratio", "Ratio CI", "Verdict")
QUICK = ["-i", "30", "-x", "3", "--iterations-large", "10", "--warmup-large", "2"]
# Coverage of the sign test's interval for the median of 10 passes: [x_(2), x_(9)] misses it
# with probability 2 P(Binomial(10, 1/2) <= 1) = 2 x 11/1024.
COVERAGE_10 = 1 - 22 / 1024


def table_rows(out):
    """(header columns, [(size, {column: cell})] in printed order) of a benchmark's table:
    right-aligned 20-character columns after a 10-character size."""
    lines = [ln for ln in out.splitlines() if ln.strip()]
    head = next(ln for ln in lines if ln.startswith("# Size"))
    cols = [head[i:i + 20].strip() for i in range(10, len(head), 20)]
    rows = []
    for ln in lines:
        if ln.startswith("#"):
            continue
        cells = [ln[i:i + 20].strip() for i in range(10, len(ln), 20)]
        rows.append((int(ln[:10]), dict(zip(cols, cells))))
    return cols, rows


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def check_series_document(doc, names, passes, seed, sizes):
    """The interleave header and the records: one per series and size, sizes in order and
    the series in declared order within each; every record's passes and median interval;
    against the baseline, ratios paired pass by pass, their median and interval, and the
    verdict that interval gives. Returns {(bytes, series): record}."""
    il = doc.get("interleave")
    check(isinstance(il, dict), f"no interleave header: {sorted(doc)}")
    check([s["name"] for s in il["series"]] == names, f"interleave.series {il['series']}")
    check(il["baseline"] == names[0] and il["passes"] == passes and il["seed"] == seed and
          il["order"] == "shuffled per pass", f"interleave header {il}")
    check(doc["options"]["repeat"] == passes and doc["options"]["seed"] == seed,
          f"options repeat {doc['options']['repeat']}, seed {doc['options'].get('seed')}")
    got = [(r["bytes"], r.get("series")) for r in doc["results"]]
    want = [(b, n) for b in sizes for n in names]
    check(got == want, f"records (bytes, series) {got}, expected {want}")
    by = {(r["bytes"], r["series"]): r for r in doc["results"]}
    for (b, name), rec in by.items():
        where = f"{b} B, series {name}"
        rep = rec.get("repeat")
        check(isinstance(rep, dict) and rep["passes"] == passes and len(rep["pass_us"]) == passes,
              f"{where}: repeat {rep}")
        times = sorted(rep["pass_us"])
        check(all(t > 0 for t in times), f"{where}: pass times {times}")
        check(close(rep["median_us"], median(times)), f"{where}: median_us {rep['median_us']}")
        if passes >= 6:
            lo, hi = rep["median_ci95_us"]
            check(lo <= rep["median_us"] <= hi and lo in times and hi in times,
                  f"{where}: median_ci95_us {rep['median_ci95_us']} around {rep['median_us']}, "
                  f"not order statistics of {times}")
            check(rep["ci_confidence"] >= 0.95, f"{where}: ci_confidence {rep['ci_confidence']}")
            if passes == 10:
                check(lo == times[1] and hi == times[8] and
                      close(rep["ci_confidence"], COVERAGE_10),
                      f"{where}: 10 passes give [x(2), x(9)] at {COVERAGE_10}: {rep}")
        else:
            check(rep["median_ci95_us"] is None and rep["ci_confidence"] is None,
                  f"{where}: no interval under 6 passes: {rep}")
        check(rec["validation"].get("passed", True), f"{where}: validation {rec['validation']}")
        if name == names[0]:
            check("versus" not in rec, f"{where}: the baseline has no versus: {rec.get('versus')}")
            continue
        v = rec.get("versus")
        check(isinstance(v, dict) and v["baseline"] == names[0], f"{where}: versus {v}")
        check(v["verdict"] in VERDICTS, f"{where}: verdict {v['verdict']!r}")
        base = by[(b, names[0])]["repeat"]["pass_us"]
        ratios = v["pass_ratios"]
        check(len(ratios) == passes, f"{where}: {len(ratios)} pass_ratios for {passes} passes")
        # Paired pass by pass: pass k of the series over pass k of the baseline.
        check(all(close(r, t / u) for r, t, u in zip(ratios, rep["pass_us"], base)),
              f"{where}: pass_ratios {ratios} are not pass_us / the baseline's {base}")
        check(close(v["ratio"], median(ratios)), f"{where}: ratio {v['ratio']} not the median")
        if passes < 6:
            check(v["ratio_ci95"] is None and v["verdict"] == "too few passes",
                  f"{where}: {passes} passes: {v}")
            continue
        lo, hi = v["ratio_ci95"]
        check(lo <= v["ratio"] <= hi and lo in ratios and hi in ratios, f"{where}: ratio_ci95 {v}")
        want = "faster" if hi < 1 else "slower" if lo > 1 else "indistinguishable"
        check(v["verdict"] == want, f"{where}: verdict {v['verdict']} for [{lo}, {hi}]")
    return by


def check_series_table(out, doc, names):
    """The table's series columns: rows in the document's order, the verdict of each."""
    cols, rows = table_rows(out)
    for col in SERIES_COLUMNS:
        check(col in cols, f"column {col} missing: {cols}")
    check(cols[-1] == "Validation" if "-c" in doc["argv"] else True, f"column order {cols}")
    recs = doc["results"]
    check([(s, row["Series"]) for s, row in rows] == [(r["bytes"], r["series"]) for r in recs],
          f"table rows {[(s, row['Series']) for s, row in rows]} are not the records' order")
    for (size, row), rec in zip(rows, recs):
        want = rec["versus"]["verdict"] if "versus" in rec else "baseline"
        check(row["Verdict"] == want, f"{size} B {rec['series']}: Verdict {row['Verdict']!r}, "
                                      f"JSON {want!r}")
    return rows


def validate(doc, label):
    """The document against schemas/ with test_schemas' validator; without Python's
    jsonschema a note (schemas_every_output skips then too)."""
    js, skip = jsonschema_or_skip()
    if skip:
        print(f"note: {label}: not validated: {skip}")
        return
    errors = Schemas(js).errors(doc)
    check(not errors, f"{label}: does not match schemas/collbench.result-1.schema.json:\n    "
                      + "\n    ".join(errors[:12]))


@case
def series_mpi_engine_rows_records_schema(env):
    out = env.path("ar.json")
    r = env.ok(2, "allreduce", ["--backend", "mpi,engine", "-m", "8:4K", "--stepfactor", "4",
                                *QUICK, "-c", "-J", out])
    check("# Interleaved: 2 series (mpi, engine), 10 passes per size" in r.out and
          "(seed 1)" in r.out, f"header line:\n{r.out}")
    check("[series mpi]" in r.out and "[series engine]" in r.out,
          f"one Backend line per series:\n{r.out}")
    doc = load_json(out)
    sizes = [8, 32, 128, 512, 2048]
    check_document(doc, "allreduce", 2, [b for b in sizes for _ in range(2)])
    check(doc["backend"]["name"] == "mpi", f"document backend is the baseline's: {doc['backend']}")
    check([s["backend"] for s in doc["interleave"]["series"]] == ["mpi", "engine"],
          f"series backends {doc['interleave']['series']}")
    by = check_series_document(doc, ["mpi", "engine"], 10, 1, sizes)
    check(all(by[(b, "engine")]["algo"] for b in sizes), "engine records name their algorithm")
    check_series_table(r.out, doc, ["mpi", "engine"])
    validate(doc, "cb_allreduce --backend mpi,engine")
    # The baseline may be either: engine,mpi is the same pair the other way round.
    out2 = env.path("em.json")
    r = env.ok(2, "allreduce", ["--backend", "engine,mpi", "-m", "8:8", *QUICK, "-J", out2])
    doc = load_json(out2)
    check_series_document(doc, ["engine", "mpi"], 10, 1, [8])
    check_series_table(r.out, doc, ["engine", "mpi"])
    validate(doc, "cb_allreduce --backend engine,mpi")


@case
def series_equal_pair_indistinguishable(env):
    """mpi against itself: the same code, so each pass's ratio is as likely above 1 as below
    (the shuffled order puts either first), and at one size the 95 % interval misses 1 --
    a decided verdict -- with probability 1 - 0.9785 = 22/1024 (10 passes: [x(2), x(9)]).
    Over 6 sizes, 3 or more decided has probability at most C(6,3) (22/1024)^3 < 2e-4; 2 of 6
    still happens about once in 150 runs, so up to 2 are allowed. Ratios far from 1 (beyond
    0.5-2) would be a pairing error, not noise."""
    out = env.path("mm.json")
    sizes = [8, 64, 512, 4096, 32768, 262144]
    r = env.ok(2, "allreduce", ["--backend", "mpi,mpi", "-m", "8:256K", "--stepfactor", "8",
                                *QUICK, "-J", out])
    doc = load_json(out)
    by = check_series_document(doc, ["mpi", "mpi.2"], 10, 1, sizes)
    check_series_table(r.out, doc, ["mpi", "mpi.2"])
    verdicts = {b: by[(b, "mpi.2")]["versus"]["verdict"] for b in sizes}
    decided = [b for b, v in verdicts.items() if v != "indistinguishable"]
    check(len(decided) <= 2, f"mpi against mpi decided at {len(decided)} of {len(sizes)} sizes "
                             f"(at most 2 by chance): {verdicts}")
    ratios = {b: by[(b, "mpi.2")]["versus"]["ratio"] for b in sizes}
    check(all(0.5 < x < 2 for x in ratios.values()), f"mpi/mpi ratios {ratios}")
    print(f"verdicts {verdicts}")


@case
def series_seed_shuffles_not_records(env):
    """--seed is printed and recorded; another seed measures the same records; the order of
    the series in each pass (repeat.positions) is the same for the same seed, a permutation
    in every pass, and another seed gives another order."""
    docs = []
    for seed in (None, 7, 7, 123456789):
        out = env.path(f"seed{seed}.{len(docs)}.json")
        args = ["--backend", "mpi,engine", "-m", "8:64", "--stepfactor", "8", *QUICK, "-J", out]
        r = env.ok(2, "allreduce", args + (["--seed", str(seed)] if seed is not None else []))
        want = 1 if seed is None else seed
        check(f"(seed {want})" in r.out, f"--seed {seed}: header line:\n{r.out}")
        doc = load_json(out)
        check_series_document(doc, ["mpi", "engine"], 10, want, [8, 64])
        docs.append(doc)
    keys = [[(rec["bytes"], rec["series"], rec["repeat"]["passes"], "versus" in rec)
             for rec in d["results"]] for d in docs]
    check(all(k == keys[0] for k in keys), f"records differ between seeds: {keys}")

    def orders(doc):
        return [rec["repeat"]["positions"] for rec in doc["results"]]
    for d in docs:
        for size in (8, 64):
            pos = [rec["repeat"]["positions"] for rec in d["results"] if rec["bytes"] == size]
            check(all(sorted(p) == [0, 1] for p in zip(*pos)),
                  f"every pass places each series once: {pos}")
    check(orders(docs[1]) == orders(docs[2]), "the same seed gives the same order")
    # 2 series x 10 passes x 2 sizes: another seed giving the very same 40 places has
    # probability 2^-20.
    check(orders(docs[1]) != orders(docs[3]), "another seed gives another order")
    # One series alone takes --seed (recorded, no effect) and stays a plain run.
    out = env.path("one.json")
    r = env.ok(2, "allreduce", ["--backend", "mpi", "-m", "8:8", "-i", "5", "--seed", "3",
                                "-J", out])
    doc = load_json(out)
    check("interleave" not in doc and "Interleaved" not in r.out and
          all("series" not in rec and "versus" not in rec for rec in doc["results"]),
          f"one series is not interleaved: {doc['results']}")
    check(doc["options"]["seed"] == 3 and doc["options"]["repeat"] == 1,
          f"options {doc['options']['seed']}, {doc['options']['repeat']}")


@case
def series_algorithms_and_allocations(env):
    # Two engine algorithms as series: each record is measured with its own.
    out = env.path("algos.json")
    r = env.ok(2, "allreduce", ["--backend", "engine", "--algo", "ring,rabenseifner",
                                "-m", "8:4K", "--stepfactor", "8", *QUICK, "-c", "-J", out])
    names = ["engine/ring", "engine/rabenseifner"]
    doc = load_json(out)
    sizes = [8, 64, 512, 4096]
    by = check_series_document(doc, names, 10, 1, sizes)
    check([(s["algo"], s["backend"]) for s in doc["interleave"]["series"]] ==
          [("ring", "engine"), ("rabenseifner", "engine")], f"series {doc['interleave']['series']}")
    for (b, name), rec in by.items():
        check(rec["algo"] == name.split("/")[1], f"{b} B {name}: measured {rec['algo']}")
    rows = check_series_table(r.out, doc, names)
    check(all(row["Algorithm"] == row["Series"].split("/")[1] for _, row in rows),
          f"Algorithm column {[row['Algorithm'] for _, row in rows]}")
    validate(doc, "cb_allreduce --backend engine --algo ring,rabenseifner")

    # The engine's own buffers against plain heap buffers.
    out = env.path("allocs.json")
    r = env.ok(2, "allreduce", ["--backend", "engine", "--alloc", "backend,plain", "-m", "8:4K",
                                "--stepfactor", "8", *QUICK, "-c", "-J", out])
    names = ["engine/backend", "engine/plain"]
    doc = load_json(out)
    check_series_document(doc, names, 10, 1, sizes)
    check([s["alloc"] for s in doc["interleave"]["series"]] == ["backend", "plain"],
          f"series {doc['interleave']['series']}")
    check_series_table(r.out, doc, names)
    validate(doc, "cb_allreduce --backend engine --alloc backend,plain")

    # A listed repetition gets its number; --repeat below 6 leaves no interval.
    out = env.path("rep.json")
    r = env.ok(2, "allreduce", ["--backend", "engine", "--algo", "ring,ring", "-m", "8:8",
                                "-i", "10", "-x", "1", "--repeat", "4", "-J", out])
    doc = load_json(out)
    check_series_document(doc, ["engine/ring", "engine/ring.2"], 4, 1, [8])
    check_series_table(r.out, doc, ["engine/ring", "engine/ring.2"])
    validate(doc, "cb_allreduce --backend engine --algo ring,ring --repeat 4")


@case
def series_refusals_exit_2(env):
    base = ["-m", "8:8", "-i", "2", "-x", "1"]
    for args, needle in (
            (["--backend", "mpi,engine", "--repeat", "1"], "--repeat 1"),
            (["--backend", "mpi,engine", "--algo", "all"], "--algo all"),
            (["--backend", "engine", "--algo", "ring,all"], "--algo ring,all"),
            (["--backend", "engine", "--algo", "ring,"], "--algo ring,"),
            (["--backend", "mpi,engine", "-T", "float,int32"], "-T"),
            (["--backend", "mpi,engine", "-T", "all"], "-T"),
            (["--backend", "mpi,gloo"], "--backend"),
            (["--backend", "mpi,"], "--backend"),
            (["--backend", "engine", "--alloc", "backend,heap"], "--alloc"),
            (["--backend", "engine", "--algo", "ring,nosuch"], "nosuch"),
            (["--backend", "mpi,engine", "--seed", "-1"], "--seed"),
            (["--backend", "mpi,engine", "--seed", "18446744073709551616"], "--seed"),
            (["--backend", "mpi,engine", "--seed", "abc"], "--seed")):
        r = env.run(2, "allreduce", base + args)
        check_refused(r, f"cb_allreduce {' '.join(args)}", needle)


# --- scripts/verdict_check.py on hand-made documents -----------------------------------------

VERDICT_CHECK = os.path.join(REPO, "scripts", "verdict_check.py")


def fake_doc(series, bytes_, ratio_cis, start):
    """A minimal interleaved document: one size, the baseline and one more series whose
    versus has the interval `ratio_cis` (and the verdict it gives)."""
    lo, hi = ratio_cis
    verdict = "faster" if hi < 1 else "slower" if lo > 1 else "indistinguishable"
    ratios = [lo, lo, (lo + hi) / 2, hi, hi, (lo + hi) / 2, lo, hi, (lo + hi) / 2, hi]
    rep = {"passes": 10, "pass_us": [1.0] * 10, "median_us": 1.0, "median_ci95_us": [1.0, 1.0],
           "ci_confidence": COVERAGE_10}
    return {
        "schema": "collbench.result/1", "status": "complete", "start_time": start,
        "benchmark": {"name": "allreduce"}, "backend": {"name": series[0]},
        "environment": {"collbench": {"git_revision": "abc123"}, "hostname": "vm"},
        "options": {"seed": 1}, "argv": ["cb_allreduce"],
        "interleave": {"series": [{"name": s, "backend": s.split(".")[0]} for s in series],
                       "baseline": series[0], "passes": 10, "seed": 1},
        "results": [
            {"bytes": bytes_, "series": series[0], "repeat": rep},
            {"bytes": bytes_, "series": series[1], "repeat": rep,
             "versus": {"baseline": series[0], "ratio": (lo + hi) / 2, "ratio_ci95": [lo, hi],
                        "confidence": COVERAGE_10, "verdict": verdict, "pass_ratios": ratios}}]}


def run_verdict_check(env, name, docs, names=None, args=()):
    d = env.path(name)
    os.makedirs(os.path.join(d, "raw"))
    for i, doc in enumerate(docs):
        with open(os.path.join(d, "raw", names[i] if names else f"{i:03d}.json"), "w") as f:
            json.dump(doc, f)
    p = subprocess.run([sys.executable, VERDICT_CHECK, d, *args], capture_output=True,
                       text=True, timeout=60)
    summary = load_json(os.path.join(d, "verdict_check.json")) if p.returncode in (0, 1) else None
    return p, summary


@case("-mpi", "script")
def series_verdict_check_script(env):
    """The criteria of scripts/verdict_check.py: a stable pair passes; a verdict that flips
    in 2 of 10 runs, intervals that do not all overlap, or mpi,mpi decided twice fail it."""
    good = []
    for run in range(10):
        t = f"2026-11-26T00:00:{run:02d}Z"
        for b in (8, 65536):
            good.append(fake_doc(["mpi", "engine"], b, (0.50 + 0.01 * run, 0.62), t))
            good.append(fake_doc(["mpi", "mpi.2"], b, (0.97, 1.03 + 0.001 * run), t))
    p, s = run_verdict_check(env, "good", good)
    check(p.returncode == 0, f"a stable set fails: rc={p.returncode}\n{p.stdout}\n{p.stderr}")
    check(s["passed"] is True and s["runs"] == 10, f"summary {json.dumps(s)[:800]}")
    pairs = {c["pair"]: c for c in s["checks"]}
    check(set(pairs) == {"mpi,engine", "mpi,mpi"}, f"pairs {sorted(pairs)}")
    eng = [c for c in s["checks"] if c["pair"] == "mpi,engine" and c["bytes"] == 8][0]
    check(eng["verdicts"] == ["faster"] * 10 and eng["majority"] == "faster" and
          eng["majority_count"] == 10 and eng["overlap"] is True and
          all(close(a, b) for a, b in zip(eng["common_interval"], [0.59, 0.62])),
          f"mpi,engine 8 B: {eng}")
    md = open(os.path.join(env.path("good"), "verdict_check.md")).read()
    check("| mpi,engine | 8 B |" in md and "faster (10/10)" in md, f"markdown:\n{md}")

    # A verdict flipping in 2 of 10 runs at 64 KiB: 8 of 10 is below 9.
    bad = copy.deepcopy(good)
    for doc in [d for d in bad if d["interleave"]["series"][1]["name"] == "engine" and
                d["results"][0]["bytes"] == 65536][:2]:
        v = doc["results"][1]["versus"]
        v["ratio_ci95"], v["verdict"] = [0.9, 1.1], "indistinguishable"
    p, s = run_verdict_check(env, "flip", bad)
    check(p.returncode == 1 and s["passed"] is False, f"a flipping verdict passes: {p.stdout}")
    failed = [(c["pair"], c["bytes"]) for c in s["checks"] if not c["passed"]]
    check(failed == [("mpi,engine", 65536)], f"failed checks {failed}")

    # Intervals that do not all overlap, with the same verdict every time.
    bad = copy.deepcopy(good)
    doc = [d for d in bad if d["interleave"]["series"][1]["name"] == "engine"][0]
    doc["results"][1]["versus"]["ratio_ci95"] = [0.2, 0.3]
    p, s = run_verdict_check(env, "apart", bad)
    check(p.returncode == 1, f"intervals apart pass: {p.stdout}")
    c = [c for c in s["checks"] if c["pair"] == "mpi,engine" and c["bytes"] == 8][0]
    check(c["overlap"] is False and c["common_interval"] is None and not c["passed"], f"{c}")

    # mpi,mpi decided in 2 of 10 runs: 8 of 10 indistinguishable is below 9.
    bad = copy.deepcopy(good)
    for doc in [d for d in bad if d["interleave"]["series"][1]["name"] == "mpi.2"][:4:2]:
        v = doc["results"][1]["versus"]
        v["ratio_ci95"], v["verdict"] = [1.01, 1.05], "slower"
    p, s = run_verdict_check(env, "equal", bad)
    check(p.returncode == 1, f"mpi,mpi decided twice passes: {p.stdout}")
    failed = [(c["pair"], c["bytes"]) for c in s["checks"] if not c["passed"]]
    check(failed == [("mpi,mpi", 8)], f"failed checks {failed}")

    # Unusable input: exit 2 and one line.
    os.makedirs(env.path("empty/raw"))
    p = subprocess.run([sys.executable, VERDICT_CHECK, env.path("empty")], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "verdict_check" in p.stderr,
          f"no documents: rc={p.returncode} {p.stderr!r}")


@case("-mpi", "script")
def series_verdict_check_across_launches(env):
    """--launches 6: the launch is the unit. Launch intervals that never overlap (each
    launch shifted, as a launch's memory placement shifts it) still give one run interval
    over the 6 launches' ratios; the runs' intervals overlap and the verdict holds. A run
    short of a launch fails; --launches 2 is refused (no 95 % interval over 2)."""
    docs, names = [], []
    for run in range(1, 11):
        for launch in range(1, 7):
            t = f"2026-11-26T00:{run:02d}:{launch:02d}Z"
            shift = 0.02 * ((run + launch) % 6)
            docs.append(fake_doc(["mpi", "engine"], 8, (0.50 + shift, 0.51 + shift), t))
            names.append(f"r{run:02d}.l{launch:02d}.mpi-engine.8.json")
            docs.append(fake_doc(["mpi", "mpi.2"], 8, (0.99, 1.01), t))
            names.append(f"r{run:02d}.l{launch:02d}.mpi-mpi.8.json")
    p, s = run_verdict_check(env, "launches", docs, names, ["--launches", "6"])
    check(p.returncode == 0, f"launch-level check fails: rc={p.returncode}\n{p.stdout}\n"
                             f"{p.stderr}")
    eng = [c for c in s["checks"] if c["pair"] == "mpi,engine"][0]
    check(s["launches_per_run"] == 6 and eng["launches"] == 10 and
          all(len(r) == 6 for r in eng["launch_ratios"]) and eng["overlap"] is True and
          eng["verdicts"] == ["faster"] * 10, f"mpi,engine: {eng}")
    # The same launches taken one by one: their intervals do not all overlap.
    p1, s1 = run_verdict_check(env, "one-by-one", docs, [n.replace(".l", "-l") for n in names],
                               ["--runs", "60"])
    one = [c for c in s1["checks"] if c["pair"] == "mpi,engine"][0]
    check(p1.returncode == 1 and one["overlap"] is False, f"one by one: {one}")
    short = [(d, n) for d, n in zip(docs, names) if n != "r03.l04.mpi-engine.8.json"]
    p2, s2 = run_verdict_check(env, "short", [d for d, _ in short], [n for _, n in short],
                               ["--launches", "6"])
    eng = [c for c in s2["checks"] if c["pair"] == "mpi,engine"][0]
    check(p2.returncode == 1 and "run(s) 3 with fewer than 6 launches" in eng["why"],
          f"a short run passes: {eng}")
    p3 = subprocess.run([sys.executable, VERDICT_CHECK, env.path("launches"), "--launches",
                         "2"], capture_output=True, text=True, timeout=60)
    check(p3.returncode == 2 and "at least 6" in p3.stderr, f"--launches 2: {p3.stderr!r}")


@case("-mpi", "script")
def series_committed_check_matches(env):
    """The committed verdict check (results/vm-20261126/verdict-check) is what
    scripts/verdict_check.py makes of its raw documents, and docs/statistics.md quotes its
    table verbatim: no hand-typed verdict or ratio."""
    committed = os.path.join(REPO, "results", "vm-20261126", "verdict-check")
    dest = env.path("regenerated")
    os.makedirs(dest)
    p = subprocess.run([sys.executable, VERDICT_CHECK, committed, "--write-to", dest],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode in (0, 1), f"verdict_check.py on {committed}: rc={p.returncode}\n"
                                  f"{p.stderr}")
    for name in ("verdict_check.json", "verdict_check.md"):
        with open(os.path.join(committed, name)) as f:
            old = f.read()
        with open(os.path.join(dest, name)) as f:
            new = f.read()
        check(old == new, f"{committed}/{name} is not what scripts/verdict_check.py makes of "
                          f"raw/ (rerun it: python3 scripts/verdict_check.py {committed})")
    with open(os.path.join(REPO, "docs", "statistics.md")) as f:
        docs = f.read()
    begin, end = "<!-- verdict_check.md begin -->\n", "<!-- verdict_check.md end -->"
    check(begin in docs and end in docs, "docs/statistics.md: no verdict_check.md block")
    block = docs.split(begin, 1)[1].split(end, 1)[0]
    check(block.strip() and block in new, "docs/statistics.md: the verdict_check.md block is "
                                          "not a verbatim part of the generated file")


@case
def series_verdict_check_smoke(env):
    """scripts/verdict_check.sh end to end, small: 2 launches of each pair at 2 sizes. Its
    criteria depend on this machine's noise, so exit 0 or 1 are both fine here; a launch
    that fails, a missing file or usage errors are not."""
    script = os.path.join(REPO, "scripts", "verdict_check.sh")
    out = env.path("vc")
    run_env = dict(os.environ, MPIRUN=env.mpirun, CB_RUNS="2", CB_SIZES="8 4K",
                   CB_CHECK_ARGS="-i 20 -x 2")
    p = subprocess.run(["bash", script, env.bindir, out], capture_output=True, text=True,
                       timeout=240, env=run_env)
    check(p.returncode in (0, 1), f"verdict_check.sh: rc={p.returncode}\n{p.stdout}\n{p.stderr}")
    s = load_json(os.path.join(out, "verdict_check.json"))
    check(s["passed"] == (p.returncode == 0) and not s["launch_failures"] and s["runs"] == 2,
          f"summary {json.dumps(s)[:600]}")
    got = sorted((c["pair"], c["bytes"], c["launches"], tuple(c["seeds"])) for c in s["checks"])
    want = sorted((pair, b, 2, (1, 2)) for pair in ("mpi,engine", "mpi,mpi") for b in (8, 4096))
    check(got == want, f"checks {got}, expected {want}")
    check(len(os.listdir(os.path.join(out, "raw"))) == 8, f"raw: {os.listdir(out + '/raw')}")
    with open(os.path.join(out, "verdict_check.md")) as f:
        check(f.read() in p.stdout, "the Markdown is printed")
    for bad in ([env.bindir], ["/nonexistent", out]):
        p = subprocess.run(["bash", script, *bad], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and p.stderr.count("\n") == 1, f"{bad}: rc={p.returncode} "
                                                                 f"{p.stderr!r}")


@case
def target_ci_passes_until_the_interval_or_the_cap(env):
    """--target-ci PCT: at least --repeat (6) passes, then on until the median's interval is
    within +-PCT % or the cap; the record says which ended it and what was reached; alone
    and with series; bad values refused."""
    out = env.path("tci.json")
    r = env.ok(2, "allreduce", ["--target-ci", "50", "--target-ci-cap", "5", "-m", "8:64",
                                "--stepfactor", "8", "-i", "20", "-x", "2", "-c", "-J", out])
    doc = load_json(out)
    check(doc["options"]["target_ci_pct"] == 50 and doc["options"]["repeat"] == 6,
          f"options {doc['options']}")
    check("CI(+-%)" in r.out and "until the median's 95 % interval" in r.out, r.out)
    for rec in doc["results"]:
        t = rec["repeat"]["target_ci"]
        check(rec["repeat"]["passes"] >= 6 and t["stopped_by"] in ("target", "time cap"),
              f"{rec['bytes']} B: {rec['repeat']}")
        # +-50 % is loose: met at the sixth pass unless the machine stalls for 5 s
        if t["stopped_by"] == "target":
            check(t["achieved_pct"] <= 50, f"target met but {t}")
        check(rec["validation"]["passed"], f"validation {rec['validation']}")
    validate(doc, "cb_allreduce --target-ci 50")
    # A target no run can meet ends at a cap, and says which: the time cap (0.3 s), or the
    # 1000-pass cap where 1000 short passes take less than that.
    out = env.path("cap.json")
    env.ok(2, "allreduce", ["--target-ci", "0.01", "--target-ci-cap", "0.3", "-m", "8:8",
                            "-i", "20", "-x", "2", "-J", out])
    rec = load_json(out)["results"][0]
    t = rec["repeat"]["target_ci"]
    check((t["stopped_by"] == "time cap" or
           (t["stopped_by"] == "pass cap" and rec["repeat"]["passes"] == 1000))
          and t["cap_s"] == 0.3, f"capped: {t}, {rec['repeat']['passes']} passes")
    # With series: every series' interval must meet it.
    out = env.path("series.json")
    env.ok(2, "allreduce", ["--backend", "mpi,engine", "--target-ci", "50", "--target-ci-cap",
                            "5", "-m", "8:8", "-i", "20", "-x", "2", "-J", out])
    doc = load_json(out)
    check(all("target_ci" in rec["repeat"] and rec["repeat"]["passes"] >= 6
              for rec in doc["results"]), f"series records {doc['results']}")
    validate(doc, "cb_allreduce --backend mpi,engine --target-ci 50")
    for args, needle in ((["--target-ci", "0"], "--target-ci"),
                         (["--target-ci", "x"], "--target-ci"),
                         (["--target-ci-cap", "5"], "--target-ci-cap"),
                         (["--target-ci", "5", "--target-ci-cap", "0"], "--target-ci-cap")):
        check_refused(env.run(2, "allreduce", ["-m", "8:8", *args]), " ".join(args), needle)
