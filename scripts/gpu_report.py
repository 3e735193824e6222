#!/usr/bin/env python3
"""Turns one output folder of scripts/gpu_check.sh (a GPU host run) into a Markdown report.

  gpu_report.py RUN_DIR [-o OUT.md] [--target 0.90]

Why: a GPU run leaves ~100 files (JSON, logs, summary.txt), and what they say about the
machine, the reduction kernels, NCCL, device buffers on a shared GPU and the host sweep
(MPICH vs the engine) was read by hand. Here every table is generated from the run's files,
so the README beside a run can be regenerated and checked. Standard library only; result
files are read with cbjson, as plot.py and compare.py read them.
"""
import argparse
import glob
import gzip
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402

NCCL_SIZES = (8, 64 << 10, 1 << 20, 16 << 20, 64 << 20)  # and each run's largest size
TIME_NOTE = ("Time = `slowest_rank_us.p50`, the median over iterations of the slowest rank's "
             "time (`latency_us.avg` where a record has no `slowest_rank_us`)")
size = cbjson.format_size  # 1048576 -> '1M'


# --- helpers -------------------------------------------------------------------------------

def time_us(rec):
    """The time of sections 4 and 5 (TIME_NOTE)."""
    v = cbjson.number(rec, "slowest_rank_us", "p50")
    return v if v is not None else cbjson.METRICS["latency"].get(rec)


def fmt(v):
    if v is None:
        return "–"
    if abs(v) < 1:
        return f"{v:.3g}"
    return f"{v:,.{2 if abs(v) < 10 else 1 if abs(v) < 1000 else 0}f}"


def table(head, rows, align=None):
    align = align or ["---:"] * len(head)
    return (["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
            + ["| " + " | ".join(map(str, r)) + " |" for r in rows] + [""])


def read(run, name):
    """A file's text ('' if absent); a .json of another schema than cbjson's (cb_gpu_bench,
    cb_info) as a dict (None if absent)."""
    path = os.path.join(run, name)
    if not os.path.exists(path):
        return None if name.endswith(".json") else ""
    with open(path, encoding="utf-8") as f:
        return json.load(f) if name.endswith(".json") else f.read()


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def load_runs(run, pattern):
    """{name without a trailing pass number: [document per pass]}, from RUN/pattern."""
    out = {}
    for path in sorted(glob.glob(os.path.join(run, pattern))):
        out.setdefault(re.sub(r"_\d+$", "", os.path.basename(path)[:-5]), []).append(
            cbjson.load(path))
    return out


# --- sections ------------------------------------------------------------------------------

def machine(run):
    text = read(run, "environment.txt")
    kv = dict(re.findall(r"^(\w+): (.*)$", text, re.M))
    smi = re.search(r"^name, memory.total.*\n(.*)$", text, re.M)  # nvidia-smi's CSV row
    nvcc = re.search(r"release [\d.]+, V([\d.]+)", text)
    info = read(run, "info.json") or {}  # cb_info: the environment block of every result
    env = info.get("environment", {})
    gpu, cb, cpu, mpi = (env.get(k) or {} for k in ("gpu", "collbench", "cpu", "mpi"))
    dev = (gpu.get("devices") or [{}])[0]
    rows = [
        ("Date", kv.get("date", "?")),
        ("GPU", f"{dev.get('name', '?')} (compute capability {dev.get('compute_capability')}, "
                f"{dev.get('multiprocessors')} SMs, {(dev.get('memory_bytes') or 0) / 2**30:.1f} "
                "GiB)"),
        ("Driver", f"{smi[1].split(',')[2].strip() if smi else '?'} (nvidia-smi); CUDA driver "
                   f"API {gpu.get('driver', '?')}"),
        ("CUDA runtime", f"{gpu.get('runtime', '?')}; nvcc {nvcc[1] if nvcc else '?'}; built for "
                         f"sm_{info.get('build', {}).get('cuda_architectures', '?')}"),
        ("CPU", f"{cpu.get('model', '?')}, {cpu.get('logical_cores', '?')} logical cores "
                f"(environment.txt: cores: {kv.get('cores', '?')})"),
        ("OS", env.get("os", "?")),
        ("MPI", f"{mpi.get('library', '?')} ({mpi.get('device', '?')}), CUDA-aware: "
                f"{mpi.get('cuda_aware', '?')}"),
        ("NCCL", info.get("nccl", {}).get("version", "?")),
        ("collbench", f"{cb.get('version', '?')} at git {kv.get('git', '?')} (binaries report "
                      f"`{cb.get('git_revision', '?')}`), {cb.get('build_type')}, "
                      f"{cb.get('compiler')}"),
    ]
    return ["## 1. Machine", ""] + table(["", ""], rows, [":--", ":--"])


def kernels(run, target):
    out = ["## 2. Reduction kernels vs device-to-device copy (cb_gpu_bench)", ""]
    doc = read(run, "gpu_kernels.json")
    if not doc:
        return out + ["No `gpu_kernels.json` in this run.", ""]
    blocks, grid, copy = [[]], [], None
    for r in doc["results"]:  # each copy row is followed by the reduce rows of its size
        if r["kind"] == "copy":
            copy = r["GBps"]
            blocks.append([])
        elif r.get("blocks_per_sm") != "auto":
            grid.append(r)  # the blocks-per-SM sweep
        else:
            blocks[-1].append((r, copy))
    # the block with other ops than sum is the every-dtype-and-op one; the others the sweep
    every = [r for b in blocks if any(x["op"] != "sum" for x, _ in b) for r, _ in b]
    big = [(r, c) for b in blocks if all(x["op"] == "sum" for x, _ in b) for r, c in b
           if r["bytes"] >= 16 << 20 and r["dtype"] in ("float", "half", "bfloat16")]
    rows = [[size(r["bytes"]), r["dtype"], fmt(r["GBps"]), fmt(c),
             f"{100 * r['fraction_of_copy']:.1f}%" + (" †" if r["fraction_of_copy"] > 1 else ""),
             "meets" if r["fraction_of_copy"] >= target else "**below**"] for r, c in big]
    out += ["`dst op= src` sum, default grid. GB/s = bytes read + written / time; of copy = the "
            "reduce GB/s / the copy GB/s measured just before at the same size "
            f"(`fraction_of_copy`). Target: >= {100 * target:.0f}% of copy at >= 16M.", ""]
    out += table(["Size", "dtype", "reduce GB/s", "copy GB/s", "of copy", "target"], rows,
                 ["---:", ":--", "---:", "---:", "---:", ":--"])
    if any(r["fraction_of_copy"] > 1 for r, _ in big):
        out += ["† above 100%: at this size the data stay (partly) in the GPU's L2 cache, so "
                "neither figure is a DRAM rate; the larger sizes compare DRAM rates.", ""]
    if every:
        fr = sorted((r["fraction_of_copy"], f"{r['dtype']} {r['op']}") for r in every)
        below = [n for f, n in fr if f < target]
        out.append(f"Every dtype and op at {size(every[0]['bytes'])} ({len(fr)} kernels): "
                   f"{100 * fr[0][0]:.1f}% ({fr[0][1]}) to {100 * fr[-1][0]:.1f}% ({fr[-1][1]}) "
                   "of copy; " + (f"below target: {', '.join(below)}." if below
                                  else "all meet the target."))
    for dt in dict.fromkeys(r["dtype"] for r in grid):
        g = [r for r in grid if r["dtype"] == dt]
        out.append(f"Grid sweep, {dt} {g[0]['op']} at {size(g[0]['bytes'])}, blocks per SM: "
                   + ", ".join(f"{r['blocks_per_sm']}: {100 * r['fraction_of_copy']:.1f}%"
                               for r in g) + ".")
    return out + [""]


def nccl(run):
    out = ["## 3. NCCL, one rank", "",
           "NCCL refuses two ranks on one GPU (\"Duplicate GPU detected\"; collbench stops with "
           "exit 2 first), so this one-GPU machine has only one-rank figures. A one-rank "
           "collective is a local copy or nothing: these are launch overheads and device copy "
           "rates, not communication. Cells: `latency_us.avg` µs / `algbw_GBps` GB/s "
           "(iallreduce: `pure_comm_us.avg` µs).", ""]
    runs = [(name, docs[0]) for name, docs in load_runs(run, "nccl_*.json").items()]
    if not runs:
        return out[:2] + ["No `nccl_*.json` in this run.", ""]
    recs = {name: {int(r["bytes"]): r for r in doc["results"]} for name, doc in runs}
    sizes = sorted({s for rs in recs.values() for s in rs if s in NCCL_SIZES}
                   | {max(rs) for rs in recs.values()})
    rows = []
    for name, doc in runs:
        opt = doc.get("options", {})
        label = f"{doc['benchmark']['name']} {opt.get('dtype', '')}" + (
            f", CUDA graph (-G {opt['cuda_graph']})" if opt.get("cuda_graph") else "")
        cells = []
        for r in map(recs[name].get, sizes):
            lat, bw = (cbjson.METRICS[m].get(r) if r else None for m in ("latency", "algbw"))
            cells.append("–" if r is None else f"{fmt(lat)} / {fmt(bw)}" if bw else fmt(lat))
        valid = all(r.get("validation", {}).get("passed", True) for r in doc["results"])
        rows.append([f"{label} (`{name}.json`)"] + cells
                    + [f"{doc.get('status')}, validation {'passed' if valid else 'FAILED'}"])
    return out + table(["Run"] + [size(s) for s in sizes] + ["status"], rows,
                       [":--"] + ["---:"] * len(sizes) + [":--"])


def best(docs):
    """{bytes: the record of the pass with the lowest time}, {bytes: algorithms used}."""
    recs, algos = {}, {}
    for r in (r for doc in docs for r in doc["results"] if time_us(r) is not None):
        s = int(r["bytes"])
        if s not in recs or time_us(r) < time_us(recs[s]):
            recs[s] = r
        algos.setdefault(s, set()).add(r.get("algo") or "default")
    return recs, algos


def cell(rec):
    """A time, with the average beside it (‡) where the two differ by more than 25%."""
    if rec is None:
        return "–"
    t, avg = time_us(rec), cbjson.number(rec, "slowest_rank_us", "avg")
    return fmt(t) + (f" ‡ (avg {fmt(avg)})" if avg and abs(t / avg - 1) > 0.25 else "")


def algo_ranges(algos):
    """'recursive_doubling 4–64K, ring 128K–64M'."""
    parts = []
    for s in sorted(algos):
        name = "/".join(sorted(algos[s]))
        if parts and parts[-1][0] == name:
            parts[-1][2] = s
        else:
            parts.append([name, s, s])
    return ", ".join(f"{n} {size(a)}" + (f"–{size(b)}" if b != a else "") for n, a, b in parts)


def device(run):
    out = ["## 4. Device buffers, ranks sharing one GPU", "",
           "The engine vs MPICH with host staging (MPICH is not CUDA-aware: `--staging` copies "
           f"whole buffers through host memory). {TIME_NOTE}; a run with passes (`_1`, `_2`) "
           "shows its best pass. Ratio = staging / engine (> 1: the engine is faster).", ""]
    groups = {}  # same setup (cbjson.setup_key: benchmark, ranks, dtype, ...), MPS or not
    for name, docs in {**load_runs(run, "engine_*.json"), **load_runs(run, "mpi_*.json"),
                       **load_runs(run, "mps_*.json")}.items():
        key = (name.startswith("mps_"),) + cbjson.setup_key(docs[0])
        groups.setdefault(key, []).append((name, docs))
    if not groups:
        return out[:2] + ["No device-buffer runs in this folder.", ""]
    for key in sorted(groups, key=str):
        if not any(time_us(r) is not None for _, docs in groups[key] for d in docs
                   for r in d["results"]):  # bandwidth benchmarks (cb_bw): MB/s, no time
            out += bandwidth(key, groups[key])
            continue
        mpis = [m for m in groups[key] if m[1][0]["backend"]["name"] == "mpi"]
        stag, cols = mpis[:1], mpis + [m for m in groups[key] if m not in mpis]
        base = best(stag[0][1])[0] if stag else {}
        out += [f"### {key[1]}, {key[2]} ranks, {key[4]}" + (" (under MPS)" if key[0] else ""), ""]
        ratio = [bool(stag) and m is not stag[0] for m in cols]  # a ratio column after it
        recs = [best(docs)[0] for _, docs in cols]
        head, rows = ["Size"], []
        for (name, docs), rt in zip(cols, ratio):
            st = {doc.get("status") for doc in docs} - {"complete"}
            head += [f"`{name}` µs" + (f" ({len(docs)} passes)" if len(docs) > 1 else "")
                     + (f" [{', '.join(sorted(st))}]" if st else "")]
            head += rt * [f"staging / {'this' if (name, docs) in mpis else 'engine'}"]
        for s in sorted({s for r in recs for s in r}):
            rows.append([size(s)])
            for r, rt in zip(recs, ratio):
                rows[-1] += [cell(r.get(s))] + rt * [f"{time_us(base[s]) / time_us(r[s]):.2f}"
                                                     if s in base and s in r else "–"]
        out += table(head, rows)
        out += ([] if stag else ["No MPI staging run of this setup in this folder.", ""])
        out += [f"Algorithms: `{n}`: {algo_ranges(best(d)[1])}." for (n, d), rt in zip(cols, ratio)
                if not stag or rt] + [""]
    if "‡" in "".join(out):
        out += ["‡ the median and the average of the slowest rank's time differ by more than "
                "25%: a bimodal distribution (processes time-slicing the GPU) or outliers.", ""]
    return out


def bandwidth(key, runs):
    """A table of `bandwidth_MBps` per size (each run's best pass) for a bandwidth benchmark."""
    def mbps(r):
        return cbjson.number(r, "bandwidth_MBps")
    out = [f"### {key[1]}, {key[2]} ranks, {key[4]}" + (" (under MPS)" if key[0] else ""), ""]
    best_rates = []
    for _, docs in runs:
        rates = {}
        for r in (r for d in docs for r in d["results"] if mbps(r) is not None):
            rates[int(r["bytes"])] = max(rates.get(int(r["bytes"]), 0), mbps(r))
        best_rates.append(rates)
    head = ["Size"] + [f"`{name}` MB/s" for name, _ in runs]
    rows = [[size(s)] + [fmt(b.get(s)) for b in best_rates]
            for s in sorted({s for b in best_rates for s in b})]
    return out + table(head, rows)


def host(run):
    """host_<coll>_<ranks>_<mpi|engine>_<pass>.json: {coll: {ranks: {backend: [{bytes: us}]}}}."""
    docs, found = {}, {}
    for path in sorted(glob.glob(os.path.join(run, "host_*.json"))):
        m = re.match(r"host_(\w+?)_(\d+)_(mpi|engine)_(\d+)\.json$", os.path.basename(path))
        if m:
            doc = docs[path] = cbjson.load(path)
            found.setdefault(m[1], {}).setdefault(int(m[2]), {}).setdefault(m[3], []).append(
                {int(r["bytes"]): time_us(r) for r in doc["results"]})
    out = ["## 5. Host collectives: MPICH vs the engine", ""]
    if not found:
        return out + ["No host sweep (`host_*.json`) in this run.", ""]
    cores = cbjson.number(next(iter(docs.values())), "environment", "cpu", "logical_cores")
    out += [f"Host buffers, one node, {cores or 0:.0f} logical cores; each setup ran twice, "
            f"interleaved mpi_1, engine_1, mpi_2, engine_2. {TIME_NOTE}. Shown: the best "
            "(lowest) pass of each; ratio = engine / MPICH (< 1: the engine is faster). Verdict: "
            "**faster** when both engine passes beat both MPICH passes, **slower** when both are "
            "behind, ~ (indistinguishable) when the passes overlap.", ""]
    summary = []
    for coll, by_np in sorted(found.items()):
        sizes = sorted({s for b in by_np.values() for p in b.values() for t in p for s in t})
        head, rows = ["Size"], [[size(s)] for s in sizes]
        for n, b in sorted(by_np.items()):
            head += [f"{n}: MPICH µs", f"{n}: engine µs", f"{n}: engine/MPICH"]
            verdicts = {}
            for s, row in zip(sizes, rows):
                m, e = ([t[s] for t in b.get(k, []) if t.get(s)] for k in ("mpi", "engine"))
                if not m or not e:
                    row += [fmt(min(m, default=None)), fmt(min(e, default=None)), "–"]
                    continue
                v = ("one pass" if len(m) < 2 or len(e) < 2 else "faster" if max(e) < min(m)
                     else "slower" if min(e) > max(m) else "~")
                verdicts[s] = (min(e) / min(m), v)
                row += [fmt(min(m)), fmt(min(e)),
                        f"{min(e) / min(m):.2f} " + (f"**{v}**" if v == "slower" else v)]
            summary.append((coll, n, b, verdicts))
        out += [f"### {coll}", ""] + table(head, rows)
    out += ["### Where the engine is behind", "",
            "Per collective and rank count: the geometric mean of engine/MPICH over the sizes, "
            "the verdict counts, the sizes where the engine is **slower** (both passes behind), "
            "and where it is behind within noise (best-pass ratio > 1, passes overlapping).", ""]
    rows = []
    for coll, n, b, v in summary:
        count = [sum(1 for _, x in v.values() if x == k) for k in ("faster", "~", "slower")]
        rows.append([coll, n, f"{len(b.get('mpi', []))}+{len(b.get('engine', []))}",
                     f"{geomean([r for r, _ in v.values()]):.2f}", " / ".join(map(str, count)),
                     ", ".join(size(s) for s, (_, x) in v.items() if x == "slower") or "none",
                     ", ".join(size(s) for s, (r, x) in v.items() if x != "slower" and r > 1)
                     or "none"])
    return out + table(["Collective", "Ranks", "passes (MPICH+engine)", "geomean engine/MPICH",
                        "faster / ~ / slower", "engine slower at", "behind within noise at"],
                       rows, [":--", "---:", "---:", "---:", "---:", ":--", ":--"])


def tuning(run):
    """tune_<coll>_<ranks>.json (gpu_check.sh step 5c: engine --algo all on host buffers):
    per size, the fastest engine algorithm against MPICH's own collective (the engine's
    "mpi" algorithm, the library called on the same buffers)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(run, "tune_*.json"))):
        m = re.match(r"tune_(\w+?)_(\d+)\.json$", os.path.basename(path))
        if m:
            found.setdefault(m[1], {})[int(m[2])] = cbjson.load(path)
    if not found:
        return []
    out = ["## 5c. Host collectives, every engine algorithm (tuning measurements)", "",
           f"`--algo all` on host buffers, one run per collective and rank count. {TIME_NOTE}. "
           "Per size: the fastest engine algorithm and its time, MPICH's own collective on the "
           "same buffers (the engine's `mpi` algorithm) and the ratio best / MPICH (< 1: the "
           "engine is faster). One run, no interval: enough to place the tuning table's "
           "crossovers (`scripts/tune.py --merge`), not to rank two algorithms within a few "
           "percent.", ""]
    for coll, by_np in sorted(found.items()):
        per = {}
        for n, doc in by_np.items():
            for r in doc["results"]:
                t = time_us(r)
                if t is not None and r.get("algo"):
                    per.setdefault(n, {}).setdefault(int(r["bytes"]), {})[r["algo"]] = t
        sizes = sorted({s for v in per.values() for s in v})
        head, rows = ["Size"], [[size(s)] for s in sizes]
        for n in sorted(per):
            head += [f"{n}: fastest", f"{n}: µs", f"{n}: MPICH µs", f"{n}: best/MPICH"]
            for s, row in zip(sizes, rows):
                algos = {a: t for a, t in per[n].get(s, {}).items() if a != "mpi"}
                lib = per[n].get(s, {}).get("mpi")
                if not algos:
                    row += ["–", "–", fmt(lib), "–"]
                    continue
                best = min(algos, key=algos.get)
                row += [f"`{best}`", fmt(algos[best]), fmt(lib),
                        f"{algos[best] / lib:.2f}" if lib else "–"]
        out += [f"### {coll}", ""] + table(head, rows, ["---:"] + [":--", "---:", "---:", "---:"]
                                           * len(per))
    return out


def steps(run):
    out = ["## 6. Steps and tests", ""]
    st = re.findall(r"^(PASS|FAIL\(\d+\)|TIMEOUT|SKIPPED) +([^\s:]+):? *(\(optional\))?:? *(.*)$",
                    read(run, "summary.txt"), re.M)
    passed = [name for status, name, *_ in st if status == "PASS"]
    sweep = [name for _, name, *_ in st if name.startswith("host_")]
    out += [f"`summary.txt`: {len(passed)} of {len(st)} steps passed: "
            + ", ".join(p for p in passed if p not in sweep)
            + (f"; host sweep: {len(set(sweep) & set(passed))} of {len(sweep)} runs." if sweep
               else "."), ""]
    bad = [[name, status + (" (optional)" if opt else ""), detail.replace("|", "\\|")[:200]]
           for status, name, opt, detail in st if status != "PASS"]
    return out + (table(["Step", "Status", "Detail"], bad, [":--"] * 3) if bad else []) + ctest(run)


def ctest(run):
    if not os.path.exists(os.path.join(run, "ctest.xml")):
        return ["No `ctest.xml` in this run.", ""]
    cases = list(ET.parse(os.path.join(run, "ctest.xml")).getroot().iter("testcase"))
    by = {k: [c for c in cases if c.get("status") == k] for k in ("run", "fail", "notrun")}
    log = os.path.join(run, "ctest.log.gz")
    m = re.search(r"^\d+% tests passed.*$", gzip.open(log, "rt", errors="replace").read(),
                  re.M) if os.path.exists(log) else None
    out = [f"ctest (`ctest.xml`): {len(cases)} tests, {len(by['run'])} passed, "
           f"{len(by['fail'])} failed, {len(by['notrun'])} skipped"
           + (f" (`{m[0]}`)." if m else "."), ""]
    rows = []
    for c in by["fail"]:
        why = [ln.strip() for ln in (c.findtext("system-out") or "").splitlines()
               if "error:" in ln or "wrong element" in ln] or ["see ctest.log.gz"]
        rows.append([f"`{c.get('name')}`", why[0].replace("|", "\\|")[:160]
                     + (f" ({len(why)} such lines)" if len(why) > 1 else "")])
    out += table(["Failed test", "First diagnostic"], rows, [":--", ":--"]) if rows else []
    if by["notrun"]:
        out += ["Skipped: " + ", ".join(f"`{c.get('name')}`" for c in by["notrun"]) + ".", ""]
    return out


def report(run, target):
    where = os.path.normpath(run)
    intro = [f"# GPU host run: {os.path.join(*where.split(os.sep)[-2:])}", "",
             f"Generated by `scripts/gpu_report.py {where}` from the files of one "
             "`scripts/gpu_check.sh` run; do not edit by hand.", ""]
    parts = [machine(run), kernels(run, target), nccl(run), device(run), host(run), tuning(run),
             steps(run)]
    return "\n".join(intro + [ln for p in parts for ln in p]).rstrip() + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", metavar="RUN_DIR", help="an output folder of gpu_check.sh")
    ap.add_argument("-o", "--output", metavar="OUT.md", help="write here (default: stdout)")
    ap.add_argument("--target", type=float, default=0.90,
                    help="the kernels' target, a fraction of the copy bandwidth (default 0.90)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.run_dir):
        ap.error(f"{args.run_dir}: not a folder")
    if not os.path.exists(os.path.join(args.run_dir, "summary.txt")):
        ap.error(f"{args.run_dir}: no summary.txt: not an output folder of scripts/gpu_check.sh")
    try:
        md = report(args.run_dir, args.target)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(md)
        else:
            sys.stdout.write(md)
    except (cbjson.InputError, OSError, ValueError, KeyError, ET.ParseError) as e:
        print(f"gpu_report.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
