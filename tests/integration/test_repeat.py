"""--repeat N: N timed passes per size, the median pass reported, the spread in -f columns and
in the JSON (`repeat`), for every benchmark family; bad counts are refused with exit 2."""
from cbtest import case, check, check_document, doubling, load_json

LABELS = ('release', 'mpi')  # tests/labels.md (why not asan: there)

SPREAD_COLUMNS = ("Pass Min(us)", "Pass Max(us)", "Spread(%)")


def table(out):
    """(header columns, {size: [cells]}) of a benchmark's stdout table."""
    lines = [ln for ln in out.splitlines() if ln.strip()]
    head = next(ln for ln in lines if ln.startswith("# Size"))
    # columns are right-aligned in 20 characters after a 10-character size
    cols = [head[i:i + 20].strip() for i in range(10, len(head), 20)]
    rows = {}
    for ln in lines:
        if ln.startswith("#"):
            continue
        cells = [ln[i:i + 20].strip() for i in range(10, len(ln), 20)]
        rows[int(ln[:10])] = dict(zip(cols, cells))
    return cols, rows


def check_repeat(rec, passes, figure, headline):
    """The record's repeat block: its passes, and the reported pass is the median one."""
    rep = rec.get("repeat")
    where = f"{rec['bytes']} B"
    check(isinstance(rep, dict), f"{where}: no repeat block: {rec}")
    check(rep["passes"] == passes and len(rep["pass_us"]) == passes, f"{where}: passes {rep}")
    check(rep["figure"] == figure, f"{where}: figure {rep['figure']}, expected {figure}")
    times = rep["pass_us"]
    ordered = sorted(times)
    k = rep["reported_pass"]
    check(0 <= k < passes and times[k] == ordered[(passes - 1) // 2],
          f"{where}: reported pass {k} is not the (lower) median of {times}")
    median = ordered[passes // 2] if passes % 2 else (ordered[passes // 2 - 1] +
                                                      ordered[passes // 2]) / 2
    check(rep["min_us"] == ordered[0] and rep["max_us"] == ordered[-1] and
          abs(rep["median_us"] - median) <= 1e-12 * median, f"{where}: min/median/max {rep}")
    spread = 100 * (ordered[-1] - ordered[0]) / median
    check(abs(rep["spread_pct"] - spread) <= 1e-9 * max(1.0, spread), f"{where}: spread {rep}")
    check(all(t > 0 for t in times), f"{where}: pass times {times}")
    if headline is not None:
        check(abs(times[k] - headline) <= 1e-9 * headline,
              f"{where}: the record's figure {headline} is not the reported pass's {times[k]}")
    return rep


@case
def repeat_collective_full_table_and_json(env):
    out = env.path("ar.json")
    r = env.ok(2, "allreduce", ["-m", "8:4K", "-i", "30", "-x", "3", "--repeat", "3", "-f", "-c",
                                "-J", out])
    check("# Repeat: 3 passes per size" in r.out, f"header line:\n{r.out}")
    cols, rows = table(r.out)
    for col in SPREAD_COLUMNS:
        check(col in cols, f"column {col} missing: {cols}")
    check(cols[-1] == "Validation" and cols.index("Spread(%)") < cols.index("Validation"),
          f"column order {cols}")
    doc = load_json(out)
    check_document(doc, "allreduce", 2, doubling(8, 4096))
    check(doc["options"]["repeat"] == 3, f"options.repeat {doc['options'].get('repeat')}")
    for rec in doc["results"]:
        rep = check_repeat(rec, 3, "latency_us.avg", rec["latency_us"]["avg"])
        check(rec["validation"]["passed"], f"validation {rec['validation']}")
        row = rows[rec["bytes"]]
        check(float(row["Pass Min(us)"]) == round(rep["min_us"], 2) and
              float(row["Pass Max(us)"]) == round(rep["max_us"], 2) and
              float(row["Spread(%)"]) == round(rep["spread_pct"], 2),
              f"table row {row} does not match {rep}")
        check(rep["min_us"] <= rec["latency_us"]["avg"] <= rep["max_us"], f"median pass {rep}")
        moved = rec["bytes"] / (rec["latency_us"]["avg"] * 1e-6) / 1e9
        check(abs(rec["algbw_GBps"] - moved) <= 1e-9 * moved, "algbw from the median pass")


@case
def repeat_default_output_unchanged(env):
    out = env.path("ar.json")
    r = env.ok(2, "allreduce", ["-m", "8:64", "-i", "10", "-x", "1", "-f", "-J", out])
    cols, _ = table(r.out)
    check("Repeat" not in r.out and not set(SPREAD_COLUMNS) & set(cols),
          f"--repeat 1 (default) must print as before:\n{r.out}")
    doc = load_json(out)
    check(doc["options"]["repeat"] == 1, "options.repeat defaults to 1")
    check(all("repeat" not in rec for rec in doc["results"]), "no repeat block with one pass")
    # without -f the spread stays out of the table, but the JSON has it
    r = env.ok(2, "allreduce", ["-m", "8:64", "-i", "10", "-x", "1", "--repeat", "2", "-J", out])
    cols, _ = table(r.out)
    check(not set(SPREAD_COLUMNS) & set(cols), f"spread columns need -f: {cols}")
    for rec in load_json(out)["results"]:
        check_repeat(rec, 2, "latency_us.avg", rec["latency_us"]["avg"])


@case
def repeat_pt2pt_latency_and_bandwidth(env):
    lat = env.path("lat.json")
    r = env.ok(2, "latency", ["-m", "1:64", "-i", "200", "-x", "10", "--repeat", "4", "-f", "-c",
                              "-J", lat])
    cols, _ = table(r.out)
    check(all(c in cols for c in SPREAD_COLUMNS), f"latency columns {cols}")
    for rec in load_json(lat)["results"]:
        check_repeat(rec, 4, "latency_us.avg", rec["latency_us"]["avg"])
        check(rec["validation"]["passed"], "latency validation")
    bw = env.path("bw.json")
    env.ok(2, "bw", ["-m", "1K:4K", "-i", "10", "-x", "2", "-W", "8", "--repeat", "3", "-J", bw])
    for rec in load_json(bw)["results"]:
        rep = check_repeat(rec, 3, "bandwidth_MBps", None)
        # MB/s = bytes x window / 1e6 per iteration, over the reported pass's iteration time
        want = rec["bytes"] * 8 / rep["pass_us"][rep["reported_pass"]]
        check(abs(rec["bandwidth_MBps"] - want) <= 1e-9 * want,
              f"bandwidth {rec['bandwidth_MBps']} is not that of the reported pass ({want})")


@case('tsan')
def repeat_nonblocking_and_replay(env):
    nb = env.path("iar.json")
    r = env.ok(2, "iallreduce", ["-m", "1K:4K", "-i", "10", "-x", "1", "--repeat", "3", "-f",
                                 "-J", nb])
    cols, _ = table(r.out)
    check(all(c in cols for c in SPREAD_COLUMNS), f"non-blocking columns {cols}")
    for rec in load_json(nb)["results"]:
        check_repeat(rec, 3, "pure_comm_us.avg", rec["pure_comm_us"]["avg"])
    rp = env.path("replay.json")
    r = env.ok(2, "replay", ["--model", "resnet50", "--fusion", "ddp", "-i", "2", "-x", "1",
                             "--repeat", "3", "-f", "-c", "-J", rp])
    cols, _ = table(r.out)
    check(all(c in cols for c in SPREAD_COLUMNS), f"replay columns {cols}")
    (rec,) = load_json(rp)["results"]
    check_repeat(rec, 3, "step_us.avg", rec["step_us"]["avg"])
    check(rec["validation"]["passed"], "replay validation")
    # per-message figures are the reported pass's alone: 2 steps x 2 ranks each
    check(all(m["latency_us"]["max"] >= m["latency_us"]["min"] > 0 for m in rec["messages"]),
          "per-message latencies")


@case
def repeat_bad_values_exit_2(env):
    for value in ("0", "-3", "abc", "2.5", ""):
        for bench in ("latency", "allreduce"):
            r = env.run(2, bench, ["-m", "8:8", "--repeat", value])
            check(r.rc == 2, f"--repeat '{value}' ({bench}): expected exit 2: {r}")
            check(r.err.count("collbench: error") == 1 and "--repeat" in r.err,
                  f"--repeat '{value}': one error line naming the option expected: {r}")
